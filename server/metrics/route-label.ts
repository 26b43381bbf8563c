import { getPathRegExp, normalizePath } from 'trpc-to-openapi';
import { appRouter } from '../api/router';
import type { RawRoute } from '../http/raw-route';
import type { Meta } from '../trpc/init';
import { OAUTH_PATHS } from '../domain/mcp-oauth/oauth-urls';

interface RouteTemplate {
  method: string;
  pattern: RegExp;
  label: string;
}

/** Distinct paths remembered; past it the memory starts over (random 404 paths cannot grow it). */
const MAX_REMEMBERED_PATHS = 10_000;

/**
 * Names a request by its route as the OpenAPI document does (`GET /v1/devices/{id}`), so
 * the latency histogram has one series per route and status, never one per id. Paths no
 * route serves share one label per area: `unmatched` under /v1, `console` for pages.
 */
export function createRouteLabeler(rawRoutes: readonly RawRoute[]): (method: string, path: string) => string {
  const procedures = appRouter._def.procedures as Record<string, { _def: { meta?: Meta } }>;
  const templates: RouteTemplate[] = [
    ...rawRoutes.map(({ method, pattern, template }) => ({ method, pattern, label: `${method} /v1${template}` })),
    ...Object.values(procedures).flatMap(({ _def: { meta } }) => {
      if (meta?.openapi === undefined) return [];
      const path = normalizePath(meta.openapi.path);
      return [{ method: meta.openapi.method, pattern: getPathRegExp(path), label: `${meta.openapi.method} /v1${path}` }];
    }),
  ];
  const remembered = new Map<string, string>();

  return (method, path) => {
    const key = `${method} ${path}`;
    let label = remembered.get(key);
    if (label === undefined) {
      label = labelOf(templates, method, path);
      if (remembered.size >= MAX_REMEMBERED_PATHS) remembered.clear();
      remembered.set(key, label);
    }
    return label;
  };
}

// The MCP authorization server's paths too (each a fixed path; others under /oauth/ are 404s and fall to `console`).
const FIXED_PATHS = new Set(['/healthz', '/readyz', '/metrics', '/docs', '/v1/openapi.json', '/mcp', ...Object.values(OAUTH_PATHS), `${OAUTH_PATHS.protectedResourceMetadata}/mcp`]);

function labelOf(templates: readonly RouteTemplate[], method: string, path: string): string {
  if (FIXED_PATHS.has(path)) return `${method} ${path}`;
  if (path === '/v1' || path.startsWith('/v1/')) {
    const subPath = normalizePath(path.slice('/v1'.length));
    const route = templates.find((template) => template.method === method && template.pattern.test(subPath));
    return route?.label ?? 'unmatched';
  }
  if (path.startsWith('/console/api/')) return 'console_api';
  return 'console';
}
