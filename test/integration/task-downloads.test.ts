import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startColourPages, fileBytes } from '../support/colour-pages';
import { apiClient, type ApiCall } from '../support/http';
import { waitForTaskEnd } from '../support/task-helpers';
import { createTenant, startTestService, type TestService, type TestTenant } from '../support/test-service';

// `download "<selector>"` on real Chromium: the file is kept, listed with its sha256 and
// served back; the per-file and per-task caps end the task with download_too_large.

const MAX_FILE = 100_000;
const MAX_TASK = 150_000;

let test: TestService;
let tenant: TestTenant;
let pages: Awaited<ReturnType<typeof startColourPages>>;
let api: ApiCall;
let key: string;

beforeAll(async () => {
  pages = await startColourPages();
  test = await startTestService({ OPERATOR_DOWNLOAD_MAX_FILE_BYTES: String(MAX_FILE), OPERATOR_DOWNLOAD_MAX_TASK_BYTES: String(MAX_TASK) });
  tenant = await createTenant(test);
  key = await tenant.key(['operator:devices:write', 'operator:tasks:read', 'operator:tasks:write']);
  api = apiClient(test.url, key);
});
afterAll(async () => {
  await test?.stop();
  await pages?.close();
});

const devicesOfTest: string[] = [];
afterEach(async () => {
  for (const device of devicesOfTest.splice(0)) await api('DELETE', `/v1/devices/${device}`);
});

async function run(prompt: string): Promise<any> {
  const device = await api('POST', '/v1/devices', { space_id: tenant.spaceId });
  devicesOfTest.push(device.body.id);
  const submitted = await api('POST', `/v1/devices/${device.body.id}/tasks`, { prompt });
  expect(submitted.status).toBe(202);
  return waitForTaskEnd(api, submitted.body.id);
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('task downloads', () => {
  it('keeps a downloaded file, lists it with its sha256 and serves its bytes as an attachment', async () => {
    const task = await run(`go to ${pages.url('/downloads?bytes=5000')} then download "#file-5000"; return the title`);
    expect(task).toMatchObject({ status: 'succeeded', result: 'Downloads' });
    const listed = await api('GET', `/v1/tasks/${task.id}/files`);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([
      {
        object: 'file',
        id: expect.stringMatching(/^file_[0-9a-f-]{36}$/),
        task_id: task.id,
        name: 'report-5000.csv',
        size: 5000,
        content_type: 'text/csv',
        sha256: sha256(fileBytes(5000)),
        created_at: expect.any(String),
      },
    ]);
    const file = listed.body.data[0];
    const response = await fetch(`${test.url}/v1/tasks/${task.id}/files/${file.id}`, { headers: { Authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="report-5000.csv"; filename*=UTF-8''report-5000.csv`);
    expect(response.headers.get('content-type')).toBe('text/csv');
    expect(Buffer.from(await response.arrayBuffer()).equals(fileBytes(5000))).toBe(true);
    const ranged = await fetch(`${test.url}/v1/tasks/${task.id}/files/${file.id}`, { headers: { Authorization: `Bearer ${key}`, Range: 'bytes=0-9' } });
    expect(ranged.status).toBe(206);
    expect(Buffer.from(await ranged.arrayBuffer()).equals(fileBytes(10))).toBe(true);

    // Tenancy: another organization sees neither the list nor the file; a made-up file id is 404.
    const other = await createTenant(test);
    const otherApi = apiClient(test.url, await other.key(['operator:tasks:read']));
    expect((await otherApi('GET', `/v1/tasks/${task.id}/files`)).body.error.code).toBe('task_not_found');
    expect((await otherApi('GET', `/v1/tasks/${task.id}/files/${file.id}`)).body.error.code).toBe('task_not_found');
    const made = await api('GET', `/v1/tasks/${task.id}/files/file_00000000-0000-4000-8000-000000000000`);
    expect(made.status).toBe(404);
    expect(made.body.error.code).toBe('file_not_found');
    // A file id is found only under its own task.
    const second = await run(`go to ${pages.url('/red')}; return the title`);
    expect((await api('GET', `/v1/tasks/${second.id}/files/${file.id}`)).body.error.code).toBe('file_not_found');
    expect((await api('GET', `/v1/tasks/${second.id}/files`)).body.data).toEqual([]);
  });

  it('fails with download_too_large past the per-file cap, keeping nothing', async () => {
    const task = await run(`go to ${pages.url(`/downloads?bytes=${MAX_FILE + 1}`)} then download "#file-${MAX_FILE + 1}"`);
    expect(task).toMatchObject({ status: 'failed', result: { error: 'download_too_large' } });
    expect((await api('GET', `/v1/tasks/${task.id}/files`)).body.data).toEqual([]);
  });

  it('fails with download_too_large past the per-task cap, keeping what came before', async () => {
    const task = await run(`go to ${pages.url('/downloads?bytes=80000&bytes=80001')} then download "#file-80000" then download "#file-80001"`);
    expect(task).toMatchObject({ status: 'failed', result: { error: 'download_too_large' } });
    const files = (await api('GET', `/v1/tasks/${task.id}/files`)).body.data;
    expect(files.map((file: { size: number }) => file.size)).toEqual([80_000]);
  });
});
