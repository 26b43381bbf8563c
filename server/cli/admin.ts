import { parseArgs } from 'node:util';
import type { Db } from '../../db/client';
import { openDatabase } from '../../db/open';
import { loadConfig, type Config } from '../core/config';
import { createOperator } from '../domain/console/operator-accounts';
import { createApiKey, createCheckedOrganization, createSpace, revokeApiKey, rotateEscalationSigningSecret, updateOrganizationSettings } from '../domain/orgs/operator-admin';
import { ApiError } from '../core/errors';

// Operator CLI (CONTRACT.md "Operator tools"): one command, one JSON object on stdout,
// exit 0; or an error on stderr, exit 1: `{"error": "<message>"}`, with the error table's
// `code` when the domain refused.
const USAGE = `usage: npm run --silent admin -- <command> [options]
  org:create --name N [--not-entitled] [--max-devices N] [--max-device-seconds N] [--escalation-url URL]
  space:create --org ORG --name N
  key:create --org ORG --scopes a,b [--spaces uuid,uuid] [--env live|test]
  key:revoke --key-id ID
  org:update --org ORG [--max-devices N|none] [--max-device-seconds N|none] [--escalation-url URL|none]
  org:rotate-escalation-secret --org ORG   (a new secret for signing escalation deliveries)
  operator:create --name N        (a console sign-in key for an operator of the preview)`;

const OPTIONS = {
  name: { type: 'string' },
  'not-entitled': { type: 'boolean' },
  'max-devices': { type: 'string' },
  'max-device-seconds': { type: 'string' },
  'escalation-url': { type: 'string' },
  org: { type: 'string' },
  scopes: { type: 'string' },
  spaces: { type: 'string' },
  env: { type: 'string' },
  'key-id': { type: 'string' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

function required(values: Values, name: keyof Values): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new Error(`--${name} is required`);
  return value.trim();
}

function optionalCount(values: Values, name: 'max-devices' | 'max-device-seconds'): number | null {
  const value = values[name];
  if (value === undefined) return null;
  if (!/^\d+$/.test(value)) throw new Error(`--${name} must be a whole number`);
  return Number(value);
}

/** An option of `org:update`: absent leaves the setting, `none` clears it. */
function change<T>(value: string | undefined, parse: (value: string) => T): T | null | undefined {
  if (value === undefined) return undefined;
  return value === 'none' ? null : parse(value);
}

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ args: process.argv.slice(2), options: OPTIONS, allowPositionals: true, strict: true });
  const command = positionals[0];
  const config = loadConfig();
  const database = await openDatabase(config.db);
  try {
    const result = await run(command, values, database.db, config);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await database.close();
  }
}

async function run(command: string | undefined, values: Values, db: Db, config: Config): Promise<unknown> {
  switch (command) {
    case 'org:create':
      return createCheckedOrganization(
        db,
        {
          name: required(values, 'name'),
          entitled: values['not-entitled'] !== true,
          maxDevices: optionalCount(values, 'max-devices'),
          maxDeviceSeconds: optionalCount(values, 'max-device-seconds'),
          escalationUrl: values['escalation-url'] ?? null,
        },
        { allowPrivateDestinations: config.webhooks.allowPrivateDestinations },
      );
    case 'space:create':
      return createSpace(db, required(values, 'org'), required(values, 'name'));
    case 'key:create': {
      const env = values.env ?? 'test';
      if (env !== 'live' && env !== 'test') throw new Error('--env must be live or test');
      const scopes = list(required(values, 'scopes'));
      return createApiKey(db, { orgId: required(values, 'org'), scopes, spaceIds: list(values.spaces), env });
    }
    case 'key:revoke':
      return revokeApiKey(db, required(values, 'key-id'), { publicUrl: config.http.publicUrl });
    case 'org:update':
      return updateOrganizationSettings(
        db,
        required(values, 'org'),
        {
          maxDevices: change(values['max-devices'], () => optionalCount(values, 'max-devices')),
          maxDeviceSeconds: change(values['max-device-seconds'], () => optionalCount(values, 'max-device-seconds')),
          escalationUrl: change(values['escalation-url'], (url) => url),
        },
        { allowPrivateDestinations: config.webhooks.allowPrivateDestinations },
      );
    case 'org:rotate-escalation-secret':
      return rotateEscalationSigningSecret(db, required(values, 'org'));
    case 'operator:create':
      return createOperator(db, required(values, 'name'));
    default:
      throw new Error(USAGE);
  }
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  const refused = error instanceof ApiError ? { code: error.apiCode } : {};
  process.stderr.write(`${JSON.stringify({ error: message, ...refused })}\n`);
  process.exit(1);
});
