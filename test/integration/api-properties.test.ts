import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedRoutes, type RouteSpec } from '../support/route-catalogue';
import { allScopes, createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';

// Property tests: whatever a client throws at any route (random JSON bodies, raw bytes,
// headers, query strings, ids), the answer is never a 5xx and always has the CONTRACT.md
// error body when it is an error.
let test: TestService;
let tenant: TestTenant;
let routes: RouteSpec[];
let keys: string[];

beforeAll(async () => {
  test = await startTestService();
  // No device may launch: random create calls stop at the device-count quota.
  tenant = await createTenant(test, { maxDevices: 0 });
  routes = await servedRoutes(test.url);
  keys = [await tenant.key(allScopes), await tenant.key(allScopes, [tenant.spaceId]), await tenant.key(['operator:devices:read'])];
});
afterAll(async () => {
  await test?.stop();
});

const headerText = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_ ;=/.:'.split('')), maxLength: 40 });
const fieldNames = ['name', 'region', 'space_id', 'idle_suspend_secs', 'prompt', 'allowed_domains', 'max_steps', 'url', 'description', 'enabled', 'event_types', 'mode', 'ttl_secs', 'reason', 'limit', 'cursor', 'status', 'product', 'after_seq', 'action', 'resource_id'];
const jsonBody = fc.oneof(
  fc.json(),
  fc.dictionary(fc.constantFrom(...fieldNames), fc.jsonValue(), { maxKeys: 5 }).map((value) => JSON.stringify(value)),
  fc.string(),
  fc.constant(''),
);
const queryString = fc
  .array(fc.tuple(fc.oneof(fc.constantFrom(...fieldNames), fc.string({ maxLength: 8 })), fc.oneof(fc.string({ maxLength: 20 }), fc.integer().map(String), fc.constantFrom('', '-1', '101', '1e3', 'null', 'true'))), { maxLength: 4 })
  .map((pairs) => new URLSearchParams(pairs).toString());
const idSegment = fc.oneof(
  fc.uuid().map((uuid) => `dev_${uuid}`),
  fc.uuid().map((uuid) => `task_${uuid}`),
  fc.uuid().map((uuid) => `whe_${uuid}`),
  fc.string({ maxLength: 30 }).map((value) => encodeURIComponent(value) || 'x'),
);

describe('random requests never produce a 5xx', () => {
  it('holds for every served route', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: 10_000 }),
        fc.nat({ max: 10_000 }),
        idSegment,
        queryString,
        jsonBody,
        fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', ''),
        fc.option(headerText),
        fc.option(headerText),
        async (routeIndex, keyIndex, id, query, body, contentType, idempotencyKey, lastEventId) => {
          const route = routes[routeIndex % routes.length]!;
          const headers: Record<string, string> = { Authorization: `Bearer ${keys[keyIndex % keys.length]}` };
          if (contentType !== '') headers['Content-Type'] = contentType;
          if (idempotencyKey !== null) headers['Idempotency-Key'] = idempotencyKey;
          if (lastEventId !== null) headers['Last-Event-ID'] = lastEventId;
          const path = `/v1${route.path.replace('{id}', id)}${query === '' ? '' : `?${query}`}`;
          const withBody = route.method === 'POST' || route.method === 'PATCH';
          const controller = new AbortController();
          const response = await fetch(`${test.url}${path}`, { method: route.method, headers, body: withBody ? body : undefined, signal: controller.signal, redirect: 'manual' });
          const contentTypeOut = response.headers.get('content-type') ?? '';
          // An event stream that opened is a success; it is not read to the end.
          if (contentTypeOut.startsWith('text/event-stream')) {
            controller.abort();
            expect(response.status).toBe(200);
            return;
          }
          const text = await response.text();
          expect({ path, status: response.status < 500 }).toEqual({ path, status: true });
          if (response.status >= 400) {
            const parsed = JSON.parse(text);
            expect(parsed.error.request_id).toBe(response.headers.get('x-request-id'));
            expect(typeof parsed.error.code).toBe('string');
            expect(typeof parsed.error.message).toBe('string');
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});
