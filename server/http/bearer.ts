import type { IncomingMessage } from 'node:http';

/**
 * The credential of `Authorization: Bearer <credential>`, or null: the one place a Bearer
 * header is read (API keys, MCP access tokens, escalation bearers, the metrics token, the
 * access log's key id). Which kind it is, and whether it is good, is resolveCaller's.
 */
export function bearerOf(req: IncomingMessage): string | null {
  return /^Bearer (\S+)$/.exec(req.headers.authorization?.trim() ?? '')?.[1] ?? null;
}
