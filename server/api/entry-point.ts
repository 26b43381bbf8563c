import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiErrorCode } from '../core/errors';
import type { TaskStepFeeds } from '../domain/tasks/task-step-feeds';
import type { EventStreams } from '../domain/tasks/event-streams';
import type { CallerOf, CallerRule } from '../http/resolve-caller';
import type { Services } from '../services/services';

/** What entry points are served with: the services, and the task step feeds and stream slots of the event stream. */
export type EntryServices = Services & { stepFeeds: TaskStepFeeds; eventStreams: EventStreams };

/** One request to an entry point, its caller already resolved by the entry's rule. */
export interface EntryRequest<R extends CallerRule> {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  /** The path's parameters by the template's names, percent-decoded (a malformed escape stays as sent: no id, so 404). */
  params: Record<string, string>;
  caller: CallerOf[R['kind']];
  services: EntryServices;
}

/**
 * A route whose answer is not one JSON body (bytes, an event stream), declared as a
 * procedure's meta declares a JSON operation: method, path, who may call it, its OpenAPI
 * entry. The dispatcher (assembly/entry-points.ts) matches it, resolves its caller
 * (401/403/429 as CONTRACT.md orders them) and labels its metrics; openapi.ts documents it.
 */
export interface RawEntryPoint<R extends CallerRule = CallerRule> {
  method: 'GET';
  /** Under /v1, as the OpenAPI document names it: `/tasks/{id}/recording`. */
  path: string;
  caller: R;
  /** The path parameter naming what the credential must open (a CDP session's secret). */
  subject?: string;
  /** Its entry in the document; absent for a route served for clients' sake and not part of the API (devtools json/version). */
  openapi?: RawOperation;
  handle(request: EntryRequest<R>): Promise<void>;
}

/** The parts of an OpenAPI operation a raw route declares; security, the errors of its caller rule and the success headers are added from the rest. */
export interface RawOperation {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  parameters: Array<Record<string, unknown>>;
  response: { kind: 'bytes'; contentType: string; what: string } | { kind: 'event_stream'; description: string; example: string };
  /** What the route itself answers, besides its caller's checks (401/403/429), 416 for bytes, 500 and 503. */
  errors: ApiErrorCode[];
  /** Schemas its answer names, added to the document's components. */
  components?: Record<string, unknown>;
}

/** A raw entry point, its handler typed by its caller rule's kind of caller. */
export function rawEntryPoint<const R extends CallerRule>(entry: RawEntryPoint<R>): RawEntryPoint<R> {
  return entry;
}

/** The path id prefix of a resource, as the document's parameters give it. */
export function idParameter(name: string, prefix: string): Record<string, unknown> {
  return { name, in: 'path', required: true, schema: { type: 'string', pattern: `^${prefix}_` } };
}
