import { createServer, type Server, type Socket } from 'node:net';
import { TRPCError } from '@trpc/server';
import { DrizzleQueryError } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDatabaseUnreachable } from './database-unreachable';
import { asApiError } from './errors';

// Real failures of a real postgres.js client where the machine can make them without a
// database (a port nobody listens on, a server that never answers); the server's own
// SQLSTATEs as postgres.js's PostgresError carries them.

/** A TCP server that accepts connections and never says a word, like a host behind a black hole. */
let silent: Server;
const silentSockets = new Set<Socket>();
let silentPort: number;
let closedPort: number;

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

beforeAll(async () => {
  silent = createServer((socket) => silentSockets.add(socket));
  silentPort = await listen(silent);
  const probe = createServer();
  closedPort = await listen(probe);
  await new Promise((resolve) => probe.close(resolve));
});

afterAll(async () => {
  for (const socket of silentSockets) socket.destroy();
  await new Promise((resolve) => silent.close(resolve));
});

async function failureOf(port: number): Promise<unknown> {
  const sql = postgres(`postgres://nobody@127.0.0.1:${port}/none`, { max: 1, connect_timeout: 1, onnotice: () => {} });
  try {
    await sql`select 1`;
    throw new Error('the query should have failed');
  } catch (error) {
    return error;
  } finally {
    await sql.end({ timeout: 0 });
  }
}

const serverError = (code: string) => new postgres.PostgresError({ code, message: 'x' } as never);

describe('isDatabaseUnreachable', () => {
  it('is true for a refused connection and one that never answers', async () => {
    const refused = await failureOf(closedPort);
    expect((refused as { code?: string }).code).toBe('ECONNREFUSED');
    expect(isDatabaseUnreachable(refused)).toBe(true);
    const timedOut = await failureOf(silentPort);
    expect((timedOut as { code?: string }).code).toBe('CONNECT_TIMEOUT');
    expect(isDatabaseUnreachable(timedOut)).toBe(true);
  });

  it("is true for the server's shutdown and connection SQLSTATEs, and not for its other errors", () => {
    for (const code of ['57P01', '57P02', '57P03', '08000', '08003', '08006', '08001', '08P01']) expect(isDatabaseUnreachable(serverError(code)), code).toBe(true);
    for (const code of ['23505', '40001', '42P01', '22012', '53300']) expect(isDatabaseUnreachable(serverError(code)), code).toBe(false);
  });

  it('looks through the wrappers of drizzle and tRPC', async () => {
    const refused = await failureOf(closedPort);
    const wrapped = new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: new DrizzleQueryError('select 1', [], refused as Error) });
    expect(isDatabaseUnreachable(wrapped)).toBe(true);
  });

  it('is false for the same socket codes from anything but the database client', async () => {
    const fetchFailure = await fetch(`http://127.0.0.1:${closedPort}/`).then(
      () => null,
      (error: unknown) => error,
    );
    expect(((fetchFailure as Error).cause as { code?: string }).code).toBe('ECONNREFUSED');
    expect(isDatabaseUnreachable(fetchFailure)).toBe(false);
    expect(isDatabaseUnreachable(new Error('connect ECONNREFUSED 127.0.0.1:5432'))).toBe(false);
    expect(isDatabaseUnreachable(null)).toBe(false);
  });
});

describe('asApiError', () => {
  it('answers an unreachable database as 503 service_unavailable with Retry-After, not as an unexpected 500', async () => {
    const { apiError, unexpected } = asApiError(await failureOf(closedPort));
    expect(unexpected).toBe(false);
    expect(apiError.apiCode).toBe('service_unavailable');
    expect(apiError.status).toBe(503);
    expect(Number(apiError.headers['Retry-After'])).toBeGreaterThan(0);
    expect(asApiError(serverError('23505')).apiError.apiCode).toBe('internal_error');
  });
});
