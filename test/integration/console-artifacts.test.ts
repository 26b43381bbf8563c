import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createOperator } from '../../server/domain/console/operator-accounts';
import { startColourPages } from '../support/colour-pages';
import { consoleClient } from '../support/console-client';
import { DeviceTracker } from '../support/device-tracker';
import { apiClient, type ApiCall } from '../support/http';
import { waitForTaskEnd } from '../support/task-helpers';
import { createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';

// The console's byte routes (/console/artifacts): a task's step screenshots and recording
// for the signed-in operator's <img> and <video>, authenticated by the sign-in cookie alone
// (GET only, no CSRF header), and the console's task and escalation views linking to them.
// Real server, PostgreSQL, Chromium and ffmpeg.

let test: TestService;
let tenant: TestTenant;
let pages: Awaited<ReturnType<typeof startColourPages>>;
let api: ApiCall;
let consoleKey: string;
const devices = new DeviceTracker(() => api);

beforeAll(async () => {
  pages = await startColourPages();
  test = await startTestService();
  tenant = await createTenant(test);
  api = apiClient(test.url, await tenant.key(['operator:devices:read', 'operator:devices:write', 'operator:tasks:read', 'operator:tasks:write']));
  consoleKey = (await createOperator(test.service.services.db, 'Ada')).console_key;
});
afterEach(() => devices.deleteAll());
afterAll(async () => {
  await test?.stop();
  await pages?.close();
});

async function signedIn() {
  const operator = consoleClient(test.url);
  await operator.client.signIn.mutate({ console_key: consoleKey });
  return operator;
}

async function runTask(prompt: string, until?: string[]): Promise<any> {
  const device = await devices.create(tenant.spaceId);
  const submitted = await api('POST', `/v1/devices/${device}/tasks`, { prompt });
  expect(submitted.status).toBe(202);
  return waitForTaskEnd(api, submitted.body.id, 45_000, until);
}

/** A GET as the console page's <img> or <video> makes it: the cookie, no console header. */
async function get(path: string, cookie: string | null, headers: Record<string, string> = {}) {
  const response = await fetch(`${test.url}${path}`, { headers: { ...(cookie === null ? {} : { cookie }), ...headers } });
  const bytes = Buffer.from(await response.arrayBuffer());
  return { status: response.status, headers: response.headers, bytes, code: response.headers.get('content-type') === 'application/json' ? JSON.parse(bytes.toString()).error.code : null };
}

describe('console artifacts', () => {
  it('serves a signed-in operator the task view’s screenshots and recording (with Range), and nothing to anyone else', async () => {
    const task = await runTask(`go to ${pages.url('/red')} then go to ${pages.url('/blue')}; return the title`);
    expect(task.status).toBe('succeeded');
    const { client, jar } = await signedIn();

    const view = await client.task.query({ task_id: task.id });
    const shots = view.steps.filter((step) => step.screenshot_url !== null);
    expect(shots.length).toBeGreaterThanOrEqual(2);
    for (const step of shots) expect(step.screenshot_url).toBe(`/console/artifacts/tasks/${task.id}/steps/${step.seq}/screenshot`);
    expect(view.recording_url).toBe(`/console/artifacts/tasks/${task.id}/recording`);

    // The JPEG, with the same bytes as the API key's /v1 route serves.
    const image = await get(shots[0]!.screenshot_url!, jar.cookie, { 'Sec-Fetch-Site': 'same-origin', 'Sec-Fetch-Dest': 'image' });
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/jpeg');
    expect(image.headers.get('cross-origin-resource-policy')).toBe('same-origin');
    expect(image.bytes.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    const viaApi = await api('GET', `/v1/tasks/${task.id}/steps/${shots[0]!.seq}/screenshot`);
    expect(viaApi.status).toBe(200);

    // The recording, whole and in ranges as a <video> asks for it; a screenshot opened in a new tab.
    const whole = await get(view.recording_url!, jar.cookie);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('video/mp4');
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    const part = await get(view.recording_url!, jar.cookie, { Range: 'bytes=0-99', 'Sec-Fetch-Site': 'same-origin', 'Sec-Fetch-Dest': 'video' });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 0-99/${whole.bytes.length}`);
    expect(part.bytes.equals(whole.bytes.subarray(0, 100))).toBe(true);
    const past = await get(view.recording_url!, jar.cookie, { Range: `bytes=${whole.bytes.length}-` });
    expect([past.status, past.code]).toEqual([416, 'range_not_satisfiable']);
    expect((await get(shots[1]!.screenshot_url!, jar.cookie, { 'Sec-Fetch-Site': 'none', 'Sec-Fetch-Mode': 'navigate' })).status).toBe(200);

    // Signed out, or with a sign-in that ended: 401, before anything about the task is said.
    expect(await get(shots[0]!.screenshot_url!, null)).toMatchObject({ status: 401, code: 'console_sign_in_required' });
    expect(await get(view.recording_url!, 'svc_console=constok_forged')).toMatchObject({ status: 401, code: 'console_sign_in_required' });
    expect(await get(`/console/artifacts/tasks/task_nosuchtask/recording`, null)).toMatchObject({ status: 401, code: 'console_sign_in_required' });
    // An API key is no sign-in here.
    const key = await tenant.key(['operator:tasks:read']);
    expect(await get(view.recording_url!, null, { Authorization: `Bearer ${key}` })).toMatchObject({ status: 401, code: 'console_sign_in_required' });

    // Unknown task ids, steps and paths: 404.
    const other = await runTask(`go to ${pages.url('/blue')}; return the title`);
    expect(await get(`/console/artifacts/tasks/${other.id.slice(0, -1)}${other.id.endsWith('a') ? 'b' : 'a'}/steps/1/screenshot`, jar.cookie)).toMatchObject({ status: 404, code: 'task_not_found' });
    expect(await get(`/console/artifacts/tasks/not-a-task/recording`, jar.cookie)).toMatchObject({ status: 404, code: 'task_not_found' });
    expect(await get(`/console/artifacts/tasks/${task.id}/steps/999/screenshot`, jar.cookie)).toMatchObject({ status: 404, code: 'screenshot_not_found' });
    expect(await get(`/console/artifacts/tasks/${task.id}/steps/x/screenshot`, jar.cookie)).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(await get(`/console/artifacts/tasks/${task.id}/files`, jar.cookie)).toMatchObject({ status: 404, code: 'not_found' });
    // Another task's bytes are its own (an operator reads every organization's tasks).
    const otherView = await client.task.query({ task_id: other.id });
    const otherImage = await get(otherView.steps.find((step) => step.screenshot_url !== null)!.screenshot_url!, jar.cookie);
    expect(otherImage.status).toBe(200);
    expect(otherImage.bytes.equals(image.bytes)).toBe(false);

    // A page of a sibling or another site cannot use the cookie; nothing but GET and HEAD is served.
    for (const site of ['cross-site', 'same-site']) {
      expect(await get(view.recording_url!, jar.cookie, { 'Sec-Fetch-Site': site })).toMatchObject({ status: 403, code: 'console_header_required' });
    }
    const head = await fetch(`${test.url}${view.recording_url}`, { method: 'HEAD', headers: { cookie: jar.cookie } });
    expect([head.status, head.headers.get('content-length')]).toEqual([200, String(whole.bytes.length)]);
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const refused = await fetch(`${test.url}${view.recording_url}`, { method, headers: { cookie: jar.cookie, 'x-svc-console': '1' } });
      expect(refused.status).toBe(405);
      expect(refused.headers.get('allow')).toBe('GET, HEAD');
      expect(((await refused.json()) as any).error.code).toBe('method_not_allowed');
    }
  });

  it('shows no recording while none is finished, and links the escalation view’s steps to the console’s route', async () => {
    const { client, jar } = await signedIn();
    const parked = await runTask(`go to ${pages.url('/red')} then ask a human "Which plan?" then return the title`, ['needs_human']);
    const view = await client.task.query({ task_id: parked.id });
    const [escalation] = view.escalations;
    const detail = await client.escalation.query({ id: escalation!.id });
    expect(detail.steps.map((step) => step.seq)).toEqual(view.steps.map((step) => step.seq));
    // One mapping of steps: the escalation view's are the task view's.
    expect(detail.steps).toEqual(view.steps);
    const shot = detail.steps.find((step) => step.screenshot_url !== null)!;
    expect(shot.screenshot_url).toBe(`/console/artifacts/tasks/${parked.id}/steps/${shot.seq}/screenshot`);
    expect((await get(shot.screenshot_url!, jar.cookie)).status).toBe(200);

    // A task whose run has not ended yet has no recording: the view says so and the route answers 404.
    const device = await devices.create(tenant.spaceId);
    const submitted = await api('POST', `/v1/devices/${device}/tasks`, { prompt: `go to ${pages.url('/red?after=3000')} then wait for "Ready"` });
    const running = await client.task.query({ task_id: submitted.body.id });
    expect(running.recording_url).toBeNull();
    expect(await get(`/console/artifacts/tasks/${submitted.body.id}/recording`, jar.cookie)).toMatchObject({ status: 404, code: 'recording_not_found' });
    await waitForTaskEnd(api, submitted.body.id);
  });
});
