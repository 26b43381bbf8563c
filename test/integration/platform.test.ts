import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '../support/http';
import { createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';

let test: TestService;
let tenant: TestTenant;

beforeAll(async () => {
  test = await startTestService();
  tenant = await createTenant(test);
});
afterAll(async () => {
  await test?.stop();
});

describe('whoami', () => {
  it('answers for a valid key with its organization, scopes and Spaces', async () => {
    const key = await tenant.key(['operator:devices:read'], [tenant.spaceId]);
    const response = await apiClient(test.url, key)('GET', '/v1/whoami');
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toMatch(/^req_[0-9a-f-]{36}$/);
    expect(response.body).toEqual({
      org_id: tenant.orgId,
      product: 'operator',
      scopes: ['operator:devices:read'],
      service_account_id: key.split('_')[3],
      space_ids: [tenant.spaceId],
    });
  });

  it('refuses a missing, malformed or unknown key with 401 invalid_api_key', async () => {
    const key = await tenant.key(['operator:devices:read']);
    const tampered = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
    for (const authorization of [undefined, 'Bearer', `Basic ${key}`, 'Bearer nope', `Bearer ${tampered}`]) {
      const response = await apiClient(test.url)('GET', '/v1/whoami', undefined, authorization === undefined ? {} : { Authorization: authorization });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({
        error: { code: 'invalid_api_key', message: expect.any(String), request_id: response.headers.get('x-request-id') },
      });
      expect(JSON.stringify(response.body)).not.toContain(key.split('_')[4]!);
    }
  });
});
