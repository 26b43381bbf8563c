import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '../support/http';
import { documentedRouteKeys, keyRoutes, routeCatalogue, servedRoutes, type RouteSpec } from '../support/route-catalogue';
import { allScopes, createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';

// Scope matrix and id rules for every route the service serves.
let test: TestService;
let tenant: TestTenant;
let routes: RouteSpec[];

beforeAll(async () => {
  test = await startTestService();
  // A device-count quota of 0 keeps property-style calls from launching browsers.
  tenant = await createTenant(test, { maxDevices: 0 });
  routes = await servedRoutes(test.url);
});
afterAll(async () => {
  await test?.stop();
});

function concretePath(route: RouteSpec, id?: string): string {
  return `/v1${route.path.replace('{id}', id ?? `${route.idKind?.prefix}_${randomUUID()}`)}`;
}

function bodyFor(route: RouteSpec): unknown {
  return route.method === 'POST' || route.method === 'PATCH' ? {} : undefined;
}

describe('route catalogue', () => {
  it('lists every route in the OpenAPI document', async () => {
    const document = await (await fetch(`${test.url}/v1/openapi.json`)).json();
    const known = new Set(routeCatalogue.map((route) => `${route.method} ${route.path}`));
    expect(documentedRouteKeys(document).filter((key) => !known.has(key))).toEqual([]);
  });
});

describe('scope matrix', () => {
  it('answers 403 insufficient_scope to a key holding every scope but the route’s', async () => {
    for (const route of keyRoutes(routes).filter((candidate) => candidate.scopes.length > 0)) {
      const key = await tenant.key(allScopes.filter((scope) => !route.scopes.includes(scope)));
      const response = await apiClient(test.url, key)(route.method, concretePath(route), bodyFor(route));
      expect({ route: `${route.method} ${route.path}`, status: response.status, code: response.body?.error?.code }).toEqual({
        route: `${route.method} ${route.path}`,
        status: 403,
        code: 'insufficient_scope',
      });
    }
  });

  it('lets a key holding only the route’s scope past the scope check', async () => {
    for (const route of keyRoutes(routes)) {
      const key = await tenant.key(route.scopes.length > 0 ? [route.scopes[0]!] : []);
      const response = await apiClient(test.url, key)(route.method, concretePath(route), bodyFor(route));
      expect({ route: `${route.method} ${route.path}`, forbidden: response.status === 401 || response.body?.error?.code === 'insufficient_scope' }).toEqual({
        route: `${route.method} ${route.path}`,
        forbidden: false,
      });
    }
  });

  it('answers 401 before anything else to a request without a key', async () => {
    for (const route of routes) {
      const response = await apiClient(test.url)(route.method, concretePath(route), route.method === 'POST' ? 'not json' : undefined, { 'Content-Type': 'text/plain' });
      expect({ route: `${route.method} ${route.path}`, status: response.status }).toEqual({ route: `${route.method} ${route.path}`, status: 401 });
    }
  });
});

describe('ids', () => {
  it('answers malformed ids exactly like absent ones: 404 with the resource’s code', async () => {
    const key = await tenant.key(allScopes);
    const call = apiClient(test.url, key);
    for (const route of keyRoutes(routes).filter((candidate) => candidate.idKind !== undefined)) {
      const absent = await call(route.method, concretePath(route), bodyFor(route));
      expect({ route: route.path, status: absent.status, code: absent.body?.error?.code }).toEqual({ route: route.path, status: 404, code: route.idKind!.notFound });
      const uuid = randomUUID();
      for (const malformed of [uuid, `${route.idKind!.prefix}_${uuid.slice(1)}`, `xyz_${uuid}`, `${route.idKind!.prefix}_`, '%20', 'DROP TABLE devices']) {
        const response = await call(route.method, concretePath(route, encodeURIComponent(malformed)), bodyFor(route));
        expect({ route: route.path, malformed, status: response.status }).toEqual({ route: route.path, malformed, status: 404 });
        const { request_id: _absentId, ...absentError } = absent.body.error;
        const { request_id: _responseId, ...responseError } = response.body.error;
        expect(responseError).toEqual(absentError);
      }
    }
  });
});

describe('paths and query strings', () => {
  it('matches paths case-insensitively and ignores a trailing slash', async () => {
    const call = apiClient(test.url, await tenant.key([]));
    for (const path of ['/v1/whoami', '/v1/whoami/', '/v1/WhoAmI']) {
      const response = await call('GET', path);
      expect({ path, status: response.status, product: response.body?.product }).toEqual({ path, status: 200, product: 'operator' });
    }
  });

  it('refuses a parameter given twice with 400 invalid_request naming it', async () => {
    const call = apiClient(test.url, await tenant.key(['operator:devices:read']));
    for (const [query, param] of [['limit=5&limit=6', 'limit'], ['cursor=a&cursor=b', 'cursor'], ['status=active&status=error', 'status']]) {
      const response = await call('GET', `/v1/devices?${query}`);
      expect({ query, status: response.status, error: response.body?.error }).toMatchObject({ query, status: 400, error: { code: 'invalid_request', param } });
    }
  });

  it('refuses parameters named like members of Object.prototype as unknown, never failing on them', async () => {
    const call = apiClient(test.url, await tenant.key([]));
    for (const name of ['valueOf', '__proto__', 'constructor', 'hasOwnProperty', 'toString']) {
      const response = await call('GET', `/v1/whoami?${name}=0`);
      expect({ name, status: response.status, code: response.body?.error?.code }).toEqual({ name, status: 400, code: 'invalid_request' });
    }
  });

  it('reads limit from the query string as a number', async () => {
    const call = apiClient(test.url, await tenant.key(['operator:devices:read']));
    expect((await call('GET', '/v1/devices?limit=1')).status).toBe(200);
    for (const limit of ['0', '101', '1.5', 'ten', '']) {
      const response = await call('GET', `/v1/devices?limit=${limit}`);
      expect({ limit, status: response.status, param: response.body?.error?.param }).toEqual({ limit, status: 400, param: 'limit' });
    }
  });
});
