import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, type ApiCall } from '../support/http';
import { startTaskPages, type TaskPages } from '../support/task-pages';
import { waitForTaskEnd } from '../support/task-helpers';
import { createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';

// GET /metrics scraped as Prometheus would, and /readyz's browser reason, on the real
// service: real PostgreSQL, real Chromium (the database reason is in platform.test.ts).
const TOKEN = 'metrics-test-token-0123456789';

let test: TestService;
let tenant: TestTenant;
let api: ApiCall;
let pages: TaskPages;

beforeAll(async () => {
  pages = await startTaskPages();
  test = await startTestService({ OPERATOR_METRICS_TOKEN: TOKEN, OPERATOR_MAX_BROWSERS: '3' });
  tenant = await createTenant(test);
  api = apiClient(test.url, await tenant.key(['operator:devices:read', 'operator:devices:write', 'operator:tasks:read', 'operator:tasks:write']));
});
afterAll(async () => {
  await test?.stop();
  await pages?.close();
});

async function scrape(token = TOKEN): Promise<{ status: number; contentType: string | null; text: string }> {
  const response = await fetch(`${test.url}/metrics`, { headers: { Authorization: `Bearer ${token}` } });
  return { status: response.status, contentType: response.headers.get('content-type'), text: await response.text() };
}

/** The value of one series, e.g. `operator_devices{status="active"}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics', () => {
  it('refuses a missing or wrong bearer with 401 invalid_metrics_token', async () => {
    const missing = await fetch(`${test.url}/metrics`);
    expect(missing.status).toBe(401);
    expect((await missing.json()).error.code).toBe('invalid_metrics_token');
    const wrong = await scrape('not-the-token');
    expect(wrong.status).toBe(401);
    expect(wrong.text).not.toContain(TOKEN);
  });

  it('reports requests per route and status, devices and tasks by status, browsers, sockets, deliveries, the event loop and the pool', async () => {
    const device = await api('POST', '/v1/devices', { space_id: tenant.spaceId });
    expect(device.status).toBe(201);
    expect((await api('GET', `/v1/devices/${device.body.id}`)).status).toBe(200);
    expect((await api('GET', '/v1/devices/dev_00000000-0000-4000-8000-000000000000')).status).toBe(404);
    const submitted = await api('POST', `/v1/devices/${device.body.id}/tasks`, { prompt: `go to ${pages.url('/plain')} then return the title` });
    expect((await waitForTaskEnd(api, submitted.body.id)).status).toBe('succeeded');

    const { status, contentType, text } = await scrape();
    expect(status).toBe(200);
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(sample(text, 'operator_http_request_duration_seconds_count{route="GET /v1/devices/{id}",status="200"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'operator_http_request_duration_seconds_count{route="GET /v1/devices/{id}",status="404"}')).toBe(1);
    expect(sample(text, 'operator_http_request_duration_seconds_count{route="POST /v1/devices",status="201"}')).toBe(1);
    // Ids never become labels: one series per route, whatever ids were asked for.
    expect(text).not.toContain(device.body.id);
    expect(sample(text, 'operator_devices{status="active"}')).toBe(1);
    expect(sample(text, 'operator_devices{status="sleeping"}')).toBe(0);
    expect(sample(text, 'operator_tasks{status="succeeded"}')).toBe(1);
    expect(sample(text, 'operator_tasks_waiting_for_worker')).toBe(0);
    expect(sample(text, 'operator_deliveries{kind="webhook",state="pending"}')).toBe(0);
    expect(sample(text, 'operator_deliveries{kind="escalation",state="failing"}')).toBe(0);
    expect(sample(text, `operator_browsers_in_use{host="${test.service.services.hostId}"}`)).toBe(1);
    expect(sample(text, `operator_browser_capacity{host="${test.service.services.hostId}"}`)).toBe(3);
    expect(sample(text, 'operator_live_view_sockets')).toBe(0);
    expect(sample(text, 'operator_db_pool_size')).toBe(10);
    expect(sample(text, 'operator_db_pool_connections{state="active"}')).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);

    await api('DELETE', `/v1/devices/${device.body.id}`);
  });

  it('throttles failed bearers per client address like every other entrance', async () => {
    const strict = await startTestService({ OPERATOR_METRICS_TOKEN: TOKEN, OPERATOR_AUTH_FAILURE_LIMIT: '2' });
    try {
      for (let attempt = 0; attempt < 2; attempt += 1) {
        expect((await fetch(`${strict.url}/metrics`, { headers: { Authorization: 'Bearer wrong' } })).status).toBe(401);
      }
      const blocked = await fetch(`${strict.url}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
      expect(blocked.status).toBe(429);
      expect(blocked.headers.get('retry-after')).toMatch(/^\d+$/);
      expect((await blocked.json()).error.code).toBe('rate_limited');
    } finally {
      await strict.stop();
    }
  });

  it('does not exist without a configured token', async () => {
    const bare = await startTestService();
    try {
      const response = await fetch(`${bare.url}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
      expect(response.status).toBe(404);
      expect((await response.json()).error.code).toBe('not_found');
    } finally {
      await bare.stop();
    }
  });
});

describe('GET /readyz', () => {
  it('is 200 while the database and the browser provider answer', async () => {
    const response = await fetch(`${test.url}/readyz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
  });

  it('is 503 browser_provider_unreachable when the browserless endpoint does not answer', async () => {
    const orphaned = await startTestService({ OPERATOR_BROWSER: 'browserless', BROWSERLESS_URL: 'ws://127.0.0.1:1/?token=x' });
    try {
      const response = await fetch(`${orphaned.url}/readyz`);
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({ ok: false, reason: 'browser_provider_unreachable' });
    } finally {
      await orphaned.stop();
    }
  });
});
