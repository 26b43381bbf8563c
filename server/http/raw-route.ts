import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * A /v1 route served outside tRPC because its response is not one JSON body (the task
 * event stream). It must apply the same authentication and scope rules itself, with the
 * dependencies it was built with.
 */
export interface RawRoute {
  method: string;
  /** Matched against the path after the /v1 prefix. */
  pattern: RegExp;
  /** The path as the OpenAPI document names it, e.g. `/tasks/{id}/events` (metrics label it so). */
  template: string;
  handle(req: IncomingMessage, res: ServerResponse, context: { requestId: string; params: string[] }): Promise<void>;
}
