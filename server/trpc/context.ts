import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiError } from '../core/errors';
import type { Principal } from '../domain/keys/principal';
import type { Services } from '../services/services';

/** The context of every procedure, /v1's (built by the v1 handler) and the console's (by its handler). */
export interface Context {
  requestId: string;
  req: IncomingMessage;
  res: ServerResponse;
  services: Services;
  /**
   * A body that could not be read (not JSON, too large, malformed), or a body or query
   * string holding text PostgreSQL cannot store. The v1 handler reads input itself but
   * defers this error so authentication, rate limiting and scope checks still answer
   * first, in the order CONTRACT.md gives. Always null for the console, whose handler
   * refuses a body it cannot take before tRPC runs.
   */
  bodyError: ApiError | null;
  /**
   * Who /mcp already authenticated (an API key or an MCP OAuth access token), for the
   * procedures its tools call: the guard takes it instead of authenticating the
   * `Authorization` header again. Absent everywhere else.
   */
  authenticated?: Principal;
  /**
   * Set by the console's handler: a /v1 operation the console calls is called by the
   * signed-in operator, acting on the organization the call names (resolveCaller).
   */
  viaConsole?: true;
}
