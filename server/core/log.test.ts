import { DrizzleQueryError } from 'drizzle-orm';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { formatApiKey, generateKeyId, generateSecret } from '../domain/keys/api-key-format';
import { createLogger, maskSecrets } from './log';
import { mintSecret } from '../domain/secret-hash';

describe('maskSecrets', () => {
  it('keeps the key id of an API key and hides its secret', () => {
    const keyId = generateKeyId();
    const secret = generateSecret();
    const masked = maskSecrets(`calling with ${formatApiKey('test', keyId, secret)} now`);
    expect(masked).toBe(`calling with svc_operator_test_${keyId}_**** now`);
    expect(masked).not.toContain(secret);
  });

  it('hides webhook secrets', () => {
    expect(maskSecrets('secret whsec_abcDEF123-_xyz')).not.toContain('abcDEF123');
  });

  it('keeps the key id of a console key and hides session tokens, escalation bearers and console sign-ins whole', () => {
    const keyId = generateKeyId();
    const secret = generateSecret();
    expect(maskSecrets(`svc_console_${keyId}_${secret}`)).toBe(`svc_console_${keyId}_****`);
    for (const token of [`sestok_${secret}`, `esctok_${secret}`, `constok_${secret}`, `svc.token.sestok_${secret}`]) {
      expect(maskSecrets(`header ${token} end`)).not.toContain(secret);
    }
  });
  it('hides the MCP authorization server\'s codes, tokens and client secrets whole, keeping their kind', () => {
    for (const prefix of ['mcpat_', 'mcprt_', 'mcpcode_', 'mcpcs_']) {
      const { secret } = mintSecret(prefix);
      expect(maskSecrets(`got ${secret} end`)).toBe(`got ${prefix}**** end`);
    }
  });
});

describe('CDP URLs', () => {
  it('hides the secret of a CDP URL, in a message and inside a logged object', () => {
    const secret = `cdptok_${generateSecret()}`;
    const url = `wss://operator.example/v1/cdp_sessions/cdp_0b7c7e4e-6a55-4c1e-9d43-3e0f9b1b2a10/devtools?token=${secret}`;
    expect(maskSecrets(`connecting ${url}`)).not.toContain(secret.slice(7));
    const lines: string[] = [];
    const log = createLogger('info', { write: (line: string) => lines.push(line) });
    log.warn({ err: new Error(`could not open ${url}`), url }, 'relay failed');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('cdptok_****');
    expect(lines[0]).not.toContain(secret.slice(7));
  });
});

describe('the logger and database errors', () => {
  const PARAMETER = 'ada.lovelace@example.com';

  function capture(): { log: ReturnType<typeof createLogger>; lines: () => string } {
    const chunks: string[] = [];
    const log = createLogger('info', { write: (chunk: string) => chunks.push(chunk) });
    return { log, lines: () => chunks.join('') };
  }

  /** What postgres.js rejects a query with (its query fields enumerable, as in its debug mode) and drizzle wraps it in. */
  function failedQuery(code: string, message: string): DrizzleQueryError {
    const cause = new postgres.PostgresError({ message, code, severity: 'ERROR', routine: 'string_to_uuid', table_name: 'devices', detail: `Failing row contains (${PARAMETER}).` } as never);
    Object.assign(cause, { query: 'insert into devices (name) values ($1)', parameters: [PARAMETER], args: [PARAMETER], types: [25] });
    return new DrizzleQueryError('insert into devices (name) values ($1)', [PARAMETER], cause);
  }

  it('logs a failed query with its class, SQLSTATE and cause but without its statement, parameters or row values', () => {
    const { log, lines } = capture();
    log.error({ err: failedQuery('23514', 'new row for relation "devices" violates check constraint "name_length"') }, 'query failed');
    const logged = JSON.parse(lines());
    expect(logged.err).toMatchObject({ type: 'DrizzleQueryError', message: 'Failed query: new row for relation "devices" violates check constraint "name_length"' });
    expect(logged.err.stack).toContain('Failed query');
    expect(lines()).not.toContain(PARAMETER);
    expect(lines()).not.toContain('values ($1)');
  });

  it('leaves out the value a data exception quotes, and the parameters of an error wrapped by tRPC or logged bare', () => {
    const { log, lines } = capture();
    const dataException = failedQuery('22P02', `invalid input syntax for type uuid: "${PARAMETER}"`);
    // As tRPC wraps what a procedure throws: its own error, the message copied from the cause.
    log.error({ err: new Error(dataException.message, { cause: dataException }) }, 'wrapped');
    log.error(dataException.cause as Error);
    const [wrapped, bare] = lines().trim().split('\n').map((line) => JSON.parse(line));
    expect(wrapped.err.message).toContain('data exception 22P02 in string_to_uuid');
    expect(bare.err).toMatchObject({ type: 'PostgresError', code: '22P02', table_name: 'devices' });
    expect(bare.err).not.toHaveProperty('query');
    expect(lines()).not.toContain(PARAMETER);
  });

  it('cleans every error an AggregateError holds', () => {
    const { log, lines } = capture();
    log.error({ err: new AggregateError([failedQuery('23505', 'duplicate key value violates unique constraint "devices_pkey"'), new Error('unrelated')], 'several failed') }, 'batch');
    const logged = JSON.parse(lines());
    expect(logged.err.aggregateErrors.map((inner: { message: string }) => inner.message)).toEqual(['Failed query: duplicate key value violates unique constraint "devices_pkey"', 'unrelated']);
    expect(lines()).not.toContain(PARAMETER);
  });
});
