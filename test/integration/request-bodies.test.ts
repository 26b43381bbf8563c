import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '../support/http';
import { keyRoutes, servedRoutes, type RouteSpec } from '../support/route-catalogue';
import { allScopes, createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';

// CONTRACT.md body rules (400/413/415) and the write gate, on real routes. The tenant has
// a device quota of 0 so nothing here launches a browser.
let test: TestService;
let tenant: TestTenant;
let key: string;

beforeAll(async () => {
  test = await startTestService();
  tenant = await createTenant(test, { maxDevices: 0 });
  key = await tenant.key(allScopes);
});
afterAll(async () => {
  await test?.stop();
});

async function post(body: string, contentType?: string) {
  const response = await fetch(`${test.url}/v1/devices`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, ...(contentType === undefined ? {} : { 'Content-Type': contentType }) },
    body,
  });
  return { status: response.status, body: (await response.json()) as any, requestId: response.headers.get('x-request-id') };
}

describe('request bodies', () => {
  it('answers a body that is not JSON with 415 unsupported_media_type', async () => {
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', undefined]) {
      const response = await post('name=x', contentType);
      expect(response.status).toBe(415);
      expect(response.body.error).toMatchObject({ code: 'unsupported_media_type', request_id: response.requestId });
    }
  });

  it('answers a body over 1 MiB with 413 payload_too_large', async () => {
    const response = await post(JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) }), 'application/json');
    expect(response.status).toBe(413);
    expect(response.body.error.code).toBe('payload_too_large');
  });

  it('answers malformed JSON, non-object JSON, wrong types and unknown fields with 400 invalid_request', async () => {
    const cases: Array<[string, string | undefined]> = [
      ['{"name":', undefined],
      ['[1,2]', undefined],
      ['"text"', undefined],
      [JSON.stringify({ space_id: tenant.spaceId, name: 12 }), 'name'],
      [JSON.stringify({ space_id: tenant.spaceId, idle_suspend_secs: 5 }), 'idle_suspend_secs'],
      // JSON types are kept: a string is not coerced into the number the field wants.
      [JSON.stringify({ space_id: tenant.spaceId, idle_suspend_secs: '900' }), 'idle_suspend_secs'],
      [JSON.stringify({ space_id: tenant.spaceId, region: 'mars-1' }), 'region'],
      [JSON.stringify({ space_id: tenant.spaceId, colour: 'blue' }), 'colour'],
      [JSON.stringify({ space_id: 'not-a-uuid' }), 'space_id'],
    ];
    for (const [body, param] of cases) {
      const response = await post(body, 'application/json; charset=utf-8');
      expect({ body, status: response.status, code: response.body.error.code, param: response.body.error.param }).toEqual({ body, status: 400, code: 'invalid_request', param });
    }
  });

  it('changes nothing on bad input', async () => {
    await post(JSON.stringify({ space_id: tenant.spaceId, name: 12 }), 'application/json');
    const list = await apiClient(test.url, key)('GET', '/v1/devices');
    expect(list.body.data).toEqual([]);
  });
});

describe('typed body fields', () => {
  it('refuses a boolean sent as a string, while query strings still parse numbers', async () => {
    const call = apiClient(test.url, key);
    const patched = await call('PATCH', '/v1/webhook_endpoints/whe_00000000-0000-4000-8000-000000000000', { enabled: 'false' });
    expect({ status: patched.status, code: patched.body.error.code, param: patched.body.error.param }).toEqual({ status: 400, code: 'invalid_request', param: 'enabled' });
    const submitted = await call('POST', '/v1/devices/dev_00000000-0000-4000-8000-000000000000/tasks', { prompt: 'go to http://127.0.0.1/', max_steps: '5' });
    expect(submitted.status).toBe(404);
    expect((await call('GET', '/v1/devices?limit=5')).status).toBe(200);
  });
});

describe('the write gate', () => {
  it('refuses every write of a non-entitled organization with 403 product_not_entitled and still serves reads', async () => {
    const notEntitled = await createTenant(test, { entitled: false, maxDevices: 0 });
    const call = apiClient(test.url, await notEntitled.key(allScopes));
    const routes: RouteSpec[] = await servedRoutes(test.url);
    for (const route of keyRoutes(routes).filter((candidate) => candidate.method !== 'GET')) {
      const path = `/v1${route.path.replace('{id}', `${route.idKind?.prefix}_00000000-0000-4000-8000-000000000000`)}`;
      const response = await call(route.method, path, route.method === 'DELETE' ? undefined : {});
      expect({ route: `${route.method} ${route.path}`, status: response.status, code: response.body?.error?.code }).toEqual({
        route: `${route.method} ${route.path}`,
        status: 403,
        code: 'product_not_entitled',
      });
    }
    expect((await call('GET', '/v1/devices')).status).toBe(200);
    expect((await call('GET', '/v1/whoami')).status).toBe(200);
  });
});
