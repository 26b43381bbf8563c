import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

// The package as it would be published: built with tsc to ESM and declarations, every
// `exports` target present, and the built entry usable without the repository around it.

const run = promisify(execFile);
const SDK = path.resolve(import.meta.dirname, '..');
const ROOT = path.resolve(SDK, '..');
const manifest = JSON.parse(readFileSync(path.join(SDK, 'package.json'), 'utf8'));

beforeAll(async () => {
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(SDK, 'tsconfig.json')], { cwd: SDK });
}, 120_000);

describe('the published package', () => {
  it('builds every file its exports name', () => {
    const targets = Object.values(manifest.exports as Record<string, string | Record<string, string>>).flatMap((entry) => (typeof entry === 'string' ? [entry] : Object.values(entry)));
    for (const target of [...targets, manifest.main, manifest.types]) expect(existsSync(path.join(SDK, target)), target).toBe(true);
    expect(manifest.files).toEqual(['dist', 'openapi.json', 'README.md']);
    expect(existsSync(path.join(SDK, 'README.md'))).toBe(true);
    expect(manifest.private).toBeUndefined();
  });

  it('loads as ESM and verifies a webhook signed as the service signs it', async () => {
    const sdk = await import(pathToFileURL(path.join(SDK, manifest.exports['.'].import)).href);
    expect(typeof sdk.OperatorClient).toBe('function');
    expect(() => new sdk.OperatorClient({ apiKey: '' })).toThrow(TypeError);
    const body = JSON.stringify({ id: 'evt_1', object: 'event', type: 'operator.task.succeeded.v1', created_at: new Date().toISOString(), data: { object: {} } });
    const t = Math.floor(Date.now() / 1000);
    const header = `t=${t},v1=${createHmac('sha256', 'whsec_test').update(`${t}.${body}`).digest('hex')}`;
    const client = new sdk.OperatorClient({ apiKey: 'svc_operator_test_x', baseUrl: 'http://127.0.0.1:1' });
    expect(client.webhooks.verify(body, header, 'whsec_test').id).toBe('evt_1');
    expect(() => client.webhooks.verify(body, header, 'whsec_other')).toThrow(sdk.WebhookVerificationError);
  });
});
