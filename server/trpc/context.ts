import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiError } from '../errors';
import type { Services } from '../services';

export interface Context {
  requestId: string;
  req: IncomingMessage;
  res: ServerResponse;
  services: Services;
  /**
   * A body that could not be read (not JSON, too large, malformed), or a body or query
   * string holding text PostgreSQL cannot store. The v1 handler reads input itself but
   * defers this error so authentication, rate limiting and scope checks still answer
   * first, in the order CONTRACT.md gives.
   */
  bodyError: ApiError | null;
}
