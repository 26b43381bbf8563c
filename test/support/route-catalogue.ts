import type { Scope } from '../../server/domain/keys/scopes';

/**
 * Every /v1 route of the spec with the scopes that unlock it (any one of them), and the
 * not-found code of its `{id}`. Tests check this table against the served OpenAPI
 * document, so a new route cannot slip in untested.
 */
export interface RouteSpec {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  scopes: Scope[];
  idKind?: { prefix: string; notFound: string };
  /** Authenticated by a per-escalation bearer instead of an API key (the resolve callback). */
  escalationBearer?: true;
}

const device = { prefix: 'dev', notFound: 'device_not_found' };
const task = { prefix: 'task', notFound: 'task_not_found' };
const endpoint = { prefix: 'whe', notFound: 'webhook_endpoint_not_found' };
const session = { prefix: 'ses', notFound: 'session_not_found' };
const escalation = { prefix: 'esc', notFound: 'escalation_not_found' };
const cdpSession = { prefix: 'cdp', notFound: 'cdp_session_not_found' };
const taskCache = { prefix: 'tch', notFound: 'task_cache_not_found' };
const credential = { prefix: 'cred', notFound: 'credential_not_found' };

export const routeCatalogue: RouteSpec[] = [
  { method: 'GET', path: '/whoami', scopes: [] },
  { method: 'GET', path: '/event_types', scopes: [] },
  { method: 'GET', path: '/audit', scopes: ['operator:audit:read', 'operator:webhooks:read'] },
  { method: 'POST', path: '/devices', scopes: ['operator:devices:write'] },
  { method: 'GET', path: '/devices', scopes: ['operator:devices:read'] },
  { method: 'GET', path: '/devices/{id}', scopes: ['operator:devices:read'], idKind: device },
  { method: 'POST', path: '/devices/{id}/sleep', scopes: ['operator:devices:write'], idKind: device },
  { method: 'POST', path: '/devices/{id}/wake', scopes: ['operator:devices:write'], idKind: device },
  { method: 'DELETE', path: '/devices/{id}', scopes: ['operator:devices:write'], idKind: device },
  { method: 'POST', path: '/devices/{id}/tasks', scopes: ['operator:tasks:write'], idKind: device },
  { method: 'GET', path: '/devices/{id}/tasks', scopes: ['operator:tasks:read'], idKind: device },
  { method: 'GET', path: '/tasks/{id}', scopes: ['operator:tasks:read'], idKind: task },
  { method: 'POST', path: '/tasks/{id}/cancel', scopes: ['operator:tasks:write'], idKind: task },
  { method: 'GET', path: '/tasks/{id}/events', scopes: ['operator:tasks:read'], idKind: task },
  { method: 'GET', path: '/tasks/{id}/recording', scopes: ['operator:tasks:read'], idKind: task },
  { method: 'GET', path: '/tasks/{id}/steps/{seq}/screenshot', scopes: ['operator:tasks:read'], idKind: task },
  { method: 'GET', path: '/tasks/{id}/files', scopes: ['operator:tasks:read'], idKind: task },
  { method: 'GET', path: '/tasks/{id}/files/{file_id}', scopes: ['operator:tasks:read'], idKind: task },
  { method: 'GET', path: '/task_caches', scopes: ['operator:tasks:read'] },
  { method: 'GET', path: '/task_caches/{id}', scopes: ['operator:tasks:read'], idKind: taskCache },
  { method: 'DELETE', path: '/task_caches/{id}', scopes: ['operator:tasks:write'], idKind: taskCache },
  { method: 'GET', path: '/usage', scopes: ['operator:usage:read'] },
  { method: 'POST', path: '/webhook_endpoints', scopes: ['operator:webhooks:write'] },
  { method: 'GET', path: '/webhook_endpoints', scopes: ['operator:webhooks:read'] },
  { method: 'GET', path: '/webhook_endpoints/{id}', scopes: ['operator:webhooks:read'], idKind: endpoint },
  { method: 'PATCH', path: '/webhook_endpoints/{id}', scopes: ['operator:webhooks:write'], idKind: endpoint },
  { method: 'DELETE', path: '/webhook_endpoints/{id}', scopes: ['operator:webhooks:write'], idKind: endpoint },
  { method: 'POST', path: '/devices/{id}/sessions', scopes: ['operator:sessions:write'], idKind: device },
  { method: 'GET', path: '/sessions/{id}', scopes: ['operator:sessions:write'], idKind: session },
  { method: 'DELETE', path: '/sessions/{id}', scopes: ['operator:sessions:write'], idKind: session },
  { method: 'GET', path: '/sessions/{id}/recording', scopes: ['operator:sessions:write'], idKind: session },
  { method: 'POST', path: '/sessions/{id}/takeover', scopes: ['operator:sessions:control'], idKind: session },
  { method: 'POST', path: '/sessions/{id}/release', scopes: ['operator:sessions:control'], idKind: session },
  { method: 'POST', path: '/devices/{id}/cdp', scopes: ['operator:sessions:control'], idKind: device },
  { method: 'DELETE', path: '/cdp_sessions/{id}', scopes: ['operator:sessions:control'], idKind: cdpSession },
  { method: 'GET', path: '/cdp_sessions/{id}/recording', scopes: ['operator:sessions:write'], idKind: cdpSession },
  { method: 'GET', path: '/escalations', scopes: ['operator:escalations:read'] },
  { method: 'GET', path: '/escalations/{id}', scopes: ['operator:escalations:read'], idKind: escalation },
  { method: 'POST', path: '/escalations/{id}/resolve', scopes: [], idKind: escalation, escalationBearer: true },
  { method: 'POST', path: '/credentials', scopes: ['operator:credentials:write'] },
  { method: 'GET', path: '/credentials', scopes: ['operator:credentials:read'] },
  { method: 'GET', path: '/credentials/{id}', scopes: ['operator:credentials:read'], idKind: credential },
  { method: 'PATCH', path: '/credentials/{id}', scopes: ['operator:credentials:write'], idKind: credential },
  { method: 'DELETE', path: '/credentials/{id}', scopes: ['operator:credentials:write'], idKind: credential },
  { method: 'POST', path: '/credentials/{id}/codes', scopes: ['operator:credentials:write'], idKind: credential },
];

/** Routes called with an API key: every route but the escalation resolve callback. */
export function keyRoutes(routes: RouteSpec[]): RouteSpec[] {
  return routes.filter((route) => route.escalationBearer === undefined);
}

/** Routes the running service serves: the OpenAPI document's paths plus the raw event stream. */
export async function servedRoutes(baseUrl: string): Promise<RouteSpec[]> {
  const document = (await (await fetch(`${baseUrl}/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
  const served = new Set<string>();
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const method of Object.keys(operations)) served.add(`${method.toUpperCase()} ${path}`);
  }
  return routeCatalogue.filter((route) => served.has(`${route.method} ${route.path}`));
}

export function documentedRouteKeys(document: { paths: Record<string, Record<string, unknown>> }): string[] {
  return Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`));
}
