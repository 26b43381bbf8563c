// Whether an error means the database could not be reached, as opposed to a query it
// answered with an error. Decided by the error's code only, never by its message: the
// codes are part of node's, postgres.js's and PostgreSQL's interfaces, their wording is not.

/**
 * Node's socket errors when the server's address refuses, drops or never answers a
 * connection. Counted only when postgres.js rejected a query with them (it adds `query`
 * to every error it rejects one with): the same codes from the object store or a
 * webhook's endpoint say nothing about the database.
 */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * postgres.js's own connection errors: the connection closed under a query, did not
 * connect within connect_timeout, or was ended or destroyed (the pool closing).
 */
const CLIENT_CODES = new Set(['CONNECTION_CLOSED', 'CONNECT_TIMEOUT', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED']);

/**
 * PostgreSQL's SQLSTATEs of a server going away: 57P01 admin_shutdown, 57P02
 * crash_shutdown, 57P03 cannot_connect_now (starting up or shutting down). Class 08
 * (connection exceptions) is matched by its prefix.
 */
const SERVER_CODES = new Set(['57P01', '57P02', '57P03']);

// Wrappers nest the original as `cause` (drizzle's DrizzleQueryError, tRPC's TRPCError);
// a few levels are plenty, and the bound keeps a cyclic chain from looping.
const MAX_CAUSE_DEPTH = 5;

export function isDatabaseUnreachable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > MAX_CAUSE_DEPTH) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (CLIENT_CODES.has(code) || SERVER_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
    if (SOCKET_CODES.has(code) && 'query' in error) return true;
  }
  return 'cause' in error && isDatabaseUnreachable(error.cause, depth + 1);
}
