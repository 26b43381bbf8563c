import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DeviceTracker } from '../support/device-tracker';
import { apiClient, type ApiCall } from '../support/http';
import { startSignupPages, type SignupPages } from '../support/signup-pages';
import { readStream, waitForTaskEnd } from '../support/task-helpers';
import { createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';

// The replay cache on the offline planner (issue 27): replay and healing (the offline
// instruction of the failing step is run again), cache_key validation, the task_caches
// resource and its tenancy, allowed_domains, and the bounds (small here, through the
// OPERATOR_TASK_CACHE_* configuration).

const MAX_STEPS = 4;
const MAX_BYTES = 8192;
const MAX_ENTRIES = 3;

let test: TestService;
let pages: SignupPages;
let tenant: TestTenant;
let key: string;
let api: ApiCall;
const devices = new DeviceTracker(() => api);

beforeAll(async () => {
  pages = await startSignupPages();
  test = await startTestService({
    OPERATOR_TASK_CACHE_MAX_STEPS: String(MAX_STEPS),
    OPERATOR_TASK_CACHE_MAX_BYTES: String(MAX_BYTES),
    OPERATOR_TASK_CACHE_MAX_ENTRIES: String(MAX_ENTRIES),
  });
  tenant = await createTenant(test);
  key = await tenant.key(['operator:devices:read', 'operator:devices:write', 'operator:tasks:read', 'operator:tasks:write']);
  api = apiClient(test.url, key);
});
afterEach(() => devices.deleteAll());
afterAll(async () => {
  await test?.stop();
  await pages?.close();
});

const signUp = () => `open ${pages.base}/signup then type "grace@example.com" into "Email" then click "Subscribe" then return the text of "#message"`;
const RESULT = 'Welcome, grace@example.com';

async function submitWith(client: ApiCall, tracker: DeviceTracker, spaceId: string, body: Record<string, unknown>): Promise<string> {
  const device = await tracker.create(spaceId);
  const submitted = await client('POST', `/v1/devices/${device}/tasks`, body);
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
  return submitted.body.id;
}

const run = async (body: Record<string, unknown>, spaceId = tenant.spaceId) => waitForTaskEnd(api, await submitWith(api, devices, spaceId, body));

async function stepsOf(client: string, task: string): Promise<any[]> {
  const { frames } = await readStream(`${test.url}/v1/tasks/${task}/events`, client);
  return frames.filter((frame) => frame.event === 'step').map((frame) => JSON.parse(frame.data!));
}

async function entries(client: ApiCall, spaceId: string): Promise<any[]> {
  const listed = await client('GET', `/v1/task_caches?space_id=${spaceId}`);
  expect(listed.status).toBe(200);
  return listed.body.data;
}

describe('cache_key', () => {
  it('is 1 to 200 characters of A-Z a-z 0-9 . _ : -; anything else is 400 invalid_request with param cache_key and changes nothing', async () => {
    const device = await devices.create(tenant.spaceId);
    for (const bad of ['', 'has space', 'x'.repeat(201), 'ünïcode', 'a/b', 42, null]) {
      const refused = await api('POST', `/v1/devices/${device}/tasks`, { prompt: signUp(), cache_key: bad });
      expect(refused.status, JSON.stringify(bad)).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'invalid_request', param: 'cache_key' });
    }
    // The device took no task: a valid key of 200 characters is accepted on it.
    const accepted = await api('POST', `/v1/devices/${device}/tasks`, { prompt: `open ${pages.base}/signup then return the title`, cache_key: `A-z_0.9:${'k'.repeat(192)}` });
    expect(accepted.status).toBe(202);
    expect(accepted.body.cache).toEqual({ key: `A-z_0.9:${'k'.repeat(192)}`, outcome: 'miss' });
    expect(await waitForTaskEnd(api, accepted.body.id)).toMatchObject({ status: 'succeeded' });
    const plain = await api('POST', `/v1/devices/${await devices.create(tenant.spaceId)}/tasks`, { prompt: `open ${pages.base}/signup then return the title` });
    expect(plain.body).toMatchObject({ cache: null, usage: { replayed_steps: 0 } });
  });
});

describe('replay on the offline planner', () => {
  it('a miss stores the run, and a hit on a fresh device replays every step', async () => {
    pages.variant = 'original';
    const miss = await run({ prompt: signUp(), cache_key: 'signup' });
    expect(miss).toMatchObject({ status: 'succeeded', result: RESULT, cache: { key: 'signup', outcome: 'miss' }, usage: { model_calls: 0, replayed_steps: 0 } });
    const hitId = await submitWith(api, devices, tenant.spaceId, { prompt: signUp(), cache_key: 'signup' });
    expect(await waitForTaskEnd(api, hitId)).toMatchObject({ status: 'succeeded', result: RESULT, cache: { outcome: 'hit' }, usage: { model_calls: 0, replayed_steps: 4 } });
    const steps = await stepsOf(key, hitId);
    expect(steps.filter((step) => step.type === 'action').map((step) => [step.action, step.replayed])).toEqual([
      [`navigate ${pages.base}/signup`, true],
      ['type "grace@example.com" into "Email"', true],
      ['click "Subscribe"', true],
      ['extract text of "#message"', true],
    ]);
  });

  it('heals by running the offline instruction of the step that no longer fits again, and stores the healed run', async () => {
    // The button is now an <input type="submit">: its fingerprint matches nothing, its text still does.
    pages.variant = 'input';
    const [before] = await entries(api, tenant.spaceId).then((all) => all.filter((entry) => entry.key === 'signup'));
    const id = await submitWith(api, devices, tenant.spaceId, { prompt: signUp(), cache_key: 'signup' });
    expect(await waitForTaskEnd(api, id)).toMatchObject({ status: 'succeeded', result: RESULT, cache: { outcome: 'healed' }, usage: { replayed_steps: 2 } });
    expect((await stepsOf(key, id)).filter((step) => step.type === 'action').map((step) => step.replayed)).toEqual([true, true, false, false]);
    const healed = (await entries(api, tenant.spaceId)).find((entry) => entry.key === 'signup');
    expect(healed).toMatchObject({ id: before.id, hits: 1, heals: 1 });
    expect(healed.steps[2].action.target).toMatchObject({ tag: 'input', name: 'Subscribe' });
    expect(await run({ prompt: signUp(), cache_key: 'signup' })).toMatchObject({ status: 'succeeded', cache: { outcome: 'hit' }, usage: { replayed_steps: 4 } });
  });

  it('never follows an entry to a destination the task does not allow; a failed heal leaves the entry as it was', async () => {
    const [before] = (await entries(api, tenant.spaceId)).filter((entry) => entry.key === 'signup');
    const task = await run({ prompt: signUp(), cache_key: 'signup', allowed_domains: ['example.com'] });
    expect(task).toMatchObject({ status: 'failed', result: { error: 'domain_not_allowed' }, cache: { outcome: 'healed' }, usage: { replayed_steps: 0 } });
    expect((await entries(api, tenant.spaceId)).find((entry) => entry.key === 'signup')).toEqual(before);
  });
});

describe('the task_caches resource', () => {
  it('lists a page of entries filtered by space_id and gets one; another Space or organization neither sees nor hits it', async () => {
    const listed = await api('GET', '/v1/task_caches');
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ next_cursor: expect.any(String) });
    const entry = listed.body.data.find((item: any) => item.key === 'signup');
    expect(entry).toMatchObject({ object: 'task_cache', space_id: tenant.spaceId, prompt: signUp(), created_at: expect.any(String) });
    expect(await api('GET', `/v1/task_caches/${entry.id}`)).toMatchObject({ status: 200, body: entry });

    const otherSpace = await tenant.newSpace('second');
    expect(await entries(api, otherSpace)).toEqual([]);
    expect(await run({ prompt: signUp(), cache_key: 'signup' }, otherSpace)).toMatchObject({ cache: { outcome: 'miss' }, usage: { replayed_steps: 0 } });

    const foreign = await createTenant(test);
    const foreignKey = await foreign.key(['operator:devices:read', 'operator:devices:write', 'operator:tasks:read', 'operator:tasks:write']);
    const foreignApi = apiClient(test.url, foreignKey);
    const foreignDevices = new DeviceTracker(() => foreignApi);
    try {
      expect((await foreignApi('GET', `/v1/task_caches/${entry.id}`)).status).toBe(404);
      expect((await foreignApi('DELETE', `/v1/task_caches/${entry.id}`)).status).toBe(404);
      expect((await foreignApi('GET', '/v1/task_caches')).body.data).toEqual([]);
      const theirs = await waitForTaskEnd(foreignApi, await submitWith(foreignApi, foreignDevices, foreign.spaceId, { prompt: signUp(), cache_key: 'signup' }));
      expect(theirs).toMatchObject({ cache: { outcome: 'miss' }, usage: { replayed_steps: 0 } });
    } finally {
      await foreignDevices.deleteAll();
    }
    for (const malformed of ['tch_nope', 'whe_00000000-0000-0000-0000-000000000000', entry.id.replace('tch_', 'task_')]) {
      const missing = await api('GET', `/v1/task_caches/${malformed}`);
      expect(missing.status).toBe(404);
      expect(missing.body.error.code).toBe('task_cache_not_found');
    }
  });

  it('needs operator:tasks:read to read and operator:tasks:write to delete; a delete answers 204, then 404, and the next task is a miss', async () => {
    const [entry] = (await entries(api, tenant.spaceId)).filter((item) => item.key === 'signup');
    const writerless = apiClient(test.url, await tenant.key(['operator:tasks:read']));
    const readerless = apiClient(test.url, await tenant.key(['operator:devices:read']));
    expect((await readerless('GET', '/v1/task_caches')).status).toBe(403);
    expect((await readerless('GET', `/v1/task_caches/${entry.id}`)).status).toBe(403);
    expect((await writerless('DELETE', `/v1/task_caches/${entry.id}`)).status).toBe(403);

    const deleted = await api('DELETE', `/v1/task_caches/${entry.id}`);
    expect(deleted.status).toBe(204);
    expect((await api('DELETE', `/v1/task_caches/${entry.id}`)).status).toBe(404);
    expect((await api('GET', `/v1/task_caches/${entry.id}`)).status).toBe(404);
    expect(await run({ prompt: signUp(), cache_key: 'signup' })).toMatchObject({ status: 'succeeded', cache: { outcome: 'miss' } });
  });
});

describe('bounds', () => {
  it('a run past the steps, bytes or entries bound succeeds uncached, and a step says so', async () => {
    const bounded = await createTenant(test);
    const boundedApi = apiClient(test.url, await bounded.key(['operator:devices:read', 'operator:devices:write', 'operator:tasks:read', 'operator:tasks:write']));
    const boundedKey = await bounded.key(['operator:tasks:read']);
    const boundedDevices = new DeviceTracker(() => boundedApi);
    // The bounds are the Space's, not a device's: the seven tasks take turns on one device.
    const device = await boundedDevices.create(bounded.spaceId);
    const submit = async (body: Record<string, unknown>): Promise<string> => {
      const submitted = await boundedApi('POST', `/v1/devices/${device}/tasks`, body);
      expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
      return submitted.body.id;
    };
    const notStored = async (body: Record<string, unknown>, because: string) => {
      const id = await submit(body);
      expect(await waitForTaskEnd(boundedApi, id)).toMatchObject({ status: 'succeeded', cache: { outcome: 'miss' } });
      const note = (await stepsOf(boundedKey, id)).find((step) => step.action === 'cache_not_stored');
      expect(note).toMatchObject({ type: 'observation' });
      expect(note.note).toContain(because);
    };
    try {
      const title = `open ${pages.base}/signup then return the title`;
      await notStored({ prompt: `open ${pages.base}/signup then scroll down then scroll up then scroll down then return the title`, cache_key: 'long' }, `at most ${MAX_STEPS}`);
      await notStored({ prompt: `open ${pages.base}/signup?pad=${'x'.repeat(MAX_BYTES)} then return the title`, cache_key: 'heavy' }, `at most ${MAX_BYTES}`);
      for (const cacheKey of ['one', 'two', 'three']) await waitForTaskEnd(boundedApi, await submit({ prompt: title, cache_key: cacheKey }));
      await notStored({ prompt: title, cache_key: 'four' }, `${MAX_ENTRIES} cache entries`);
      expect((await entries(boundedApi, bounded.spaceId)).map((entry) => entry.key).sort()).toEqual(['one', 'three', 'two']);
      // Replacing an entry adds none: past the bound, an existing key is still updated.
      const replaced = await waitForTaskEnd(boundedApi, await submit({ prompt: `open ${pages.base}/welcome then return the title`, cache_key: 'one' }));
      expect(replaced).toMatchObject({ status: 'succeeded', cache: { outcome: 'miss' } });
      expect((await entries(boundedApi, bounded.spaceId)).find((entry) => entry.key === 'one').prompt).toContain('/welcome');
    } finally {
      await boundedDevices.deleteAll();
    }
  });
});
