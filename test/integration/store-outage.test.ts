import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startColourPages } from '../support/colour-pages';
import { apiClient, type ApiCall } from '../support/http';
import { startOwnedPostgres, type OwnedPostgres } from '../support/owned-postgres';
import { S3_ACCESS_KEY, S3_SECRET } from '../support/s3-server';
import { readStream, waitForTaskEnd } from '../support/task-helpers';
import { createTenant, startTestService, type TestService } from '../support/test-service';
import { parsePublicId } from '../../server/domain/ids';

// The object store (a real S3-compatible server, s3rver) goes away while tasks run and
// comes back after they ended: the tasks succeed, and their recordings and step pictures
// are stored once it answers again, by the process that ran them or, when that process
// stopped meanwhile, by its next start. A file a task downloads meanwhile fails its
// download, not the service. A database that goes away as the store takes a video does
// not lose it either.

const BUCKET = 'artifacts';
let directory: string;
let port = 0;
let s3: S3rver | null = null;
let pages: Awaited<ReturnType<typeof startColourPages>>;
let test: TestService;
let key: string;
let api: ApiCall;
let deviceId: string;

/** s3rver on its folder, on the same port every time (the service's storage URL names it); a no-op while it runs. */
async function startStore(): Promise<void> {
  await endSilence();
  if (s3 !== null) return;
  s3 = new S3rver({ address: '127.0.0.1', port, silent: true, directory, configureBuckets: [{ name: BUCKET }] });
  port = (await s3.run()).port;
}

async function stopStore(): Promise<void> {
  await s3?.close();
  s3 = null;
}

/** In the store's place, a server that takes connections and never answers (a store cut off by a silent network). */
let silent: { server: Server; sockets: Set<Socket> } | null = null;
async function silenceStore(): Promise<void> {
  await stopStore();
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  silent = { server, sockets };
}

async function endSilence(): Promise<void> {
  if (silent === null) return;
  for (const socket of silent.sockets) socket.destroy();
  await new Promise((resolve) => silent!.server.close(resolve));
  silent = null;
}

async function read(route: string): Promise<{ status: number; bytes: Buffer }> {
  const response = await fetch(`${test.url}${route}`, { headers: { Authorization: `Bearer ${key}` } });
  return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
}

/** Runs a task to its end; returns its id and the seqs of its steps with a picture. */
async function runTask(): Promise<{ taskId: string; seqs: number[] }> {
  const submitted = await api('POST', `/v1/devices/${deviceId}/tasks`, { prompt: `go to ${pages.url('/red?after=600')} then wait for "Ready"; return the title` });
  expect(submitted.status).toBe(202);
  const task = await waitForTaskEnd(api, submitted.body.id);
  expect(task).toMatchObject({ status: 'succeeded', result: 'red' });
  const steps = (await readStream(`${test.url}/v1/tasks/${task.id}/events`, key)).frames.filter((frame) => frame.event === 'step');
  const seqs = steps.map((frame) => JSON.parse(frame.data!)).filter((step) => step.screenshot_url !== null).map((step) => step.seq as number);
  expect(seqs.length).toBeGreaterThan(0);
  return { taskId: task.id, seqs };
}

async function recordingStatus(taskId: string, service: TestService = test): Promise<string[]> {
  const rows = await service.service.services.sql<{ status: string }[]>`select status from recordings where subject_kind = 'task' and subject_id = ${parsePublicId('task', taskId)!}`;
  return rows.map((row) => row.status);
}

/** The storage URL of the store startStore() runs. */
function storageUrl(): string {
  return `s3://${S3_ACCESS_KEY}:${S3_SECRET}@${BUCKET}/operator?endpoint=${encodeURIComponent(`http://127.0.0.1:${port}`)}&region=us-east-1`;
}

/** Once the store answers again, the task's video and every step's picture are served. */
async function expectArtifactsStored(taskId: string, seqs: number[]): Promise<void> {
  await expect.poll(async () => (await read(`/v1/tasks/${taskId}/recording`)).status, { timeout: 30_000, interval: 500 }).toBe(200);
  const video = await read(`/v1/tasks/${taskId}/recording`);
  expect(video.bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
  expect(await recordingStatus(taskId)).toEqual(['ready']);
  for (const seq of seqs) {
    await expect.poll(async () => (await read(`/v1/tasks/${taskId}/steps/${seq}/screenshot`)).status, { timeout: 30_000, interval: 500 }).toBe(200);
    const picture = await read(`/v1/tasks/${taskId}/steps/${seq}/screenshot`);
    expect(picture.bytes.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
  }
}

beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'store-outage-'));
  await startStore();
  pages = await startColourPages();
  test = await startTestService({ OPERATOR_STORAGE_URL: storageUrl() });
  const tenant = await createTenant(test);
  key = await tenant.key(['operator:devices:write', 'operator:tasks:read', 'operator:tasks:write']);
  api = apiClient(test.url, key);
  deviceId = (await api('POST', '/v1/devices', { space_id: tenant.spaceId })).body.id;
});

afterAll(async () => {
  await test?.stop();
  await stopStore();
  await pages?.close();
  await rm(directory, { recursive: true, force: true });
});

describe('an object store outage', () => {
  it('keeps a task\'s recording and step pictures until the store answers again', async () => {
    await stopStore();
    const { taskId, seqs } = await runTask();
    // Not given up: the video waits on this host to be stored.
    expect(await recordingStatus(taskId)).toEqual(['recording']);
    await startStore();
    await expectArtifactsStored(taskId, seqs);
  });

  it("answers reads of stored artifacts while the store is down with 503 storage_unavailable, and serves them once it is back", async () => {
    await startStore();
    const { taskId, seqs } = await runTask();
    await expectArtifactsStored(taskId, seqs);
    await stopStore();
    for (const route of [`/v1/tasks/${taskId}/recording`, `/v1/tasks/${taskId}/steps/${seqs[0]}/screenshot`]) {
      const response = await fetch(`${test.url}${route}`, { headers: { Authorization: `Bearer ${key}` } });
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      const body = await response.json();
      expect(body.error).toMatchObject({ code: 'storage_unavailable', message: 'The service cannot reach its object store right now; retry after the time given in Retry-After.' });
    }
    await startStore();
    expect((await read(`/v1/tasks/${taskId}/recording`)).status).toBe(200);
  });

  it('leaves a recording the store could not take to the next start of the service, which stores it', async () => {
    await stopStore();
    const { taskId } = await runTask();
    await test.restart('shutdown');
    expect(await recordingStatus(taskId)).toEqual(['recording']);
    await startStore();
    await expect.poll(async () => (await read(`/v1/tasks/${taskId}/recording`)).status, { timeout: 30_000, interval: 500 }).toBe(200);
    expect(await recordingStatus(taskId)).toEqual(['ready']);
  });

  it('keeps a device running tasks, and answers reads, when the store takes connections and never answers', async () => {
    await silenceStore();
    const first = await runTask();
    // The device is free for its next task: nothing of the first waits on the store.
    await runTask();
    const started = Date.now();
    expect((await read(`/v1/tasks/${first.taskId}/steps/${first.seqs[0]}/screenshot`)).status).toBe(503);
    expect(Date.now() - started).toBeLessThan(25_000);
    await startStore();
    await expectArtifactsStored(first.taskId, first.seqs);
  }, 120_000);

  it('fails a download the store refuses as download_failed', async () => {
    await stopStore();
    const submitted = await api('POST', `/v1/devices/${deviceId}/tasks`, { prompt: `go to ${pages.url('/downloads?bytes=3000')} then download "#file-3000"; return the title` });
    const task = await waitForTaskEnd(api, submitted.body.id);
    expect(task).toMatchObject({ status: 'failed', result: { error: 'download_failed' } });
    expect((await api('GET', `/v1/tasks/${task.id}/files`)).body.data).toEqual([]);
    await startStore();
  });
});

describe('a database outage as the store takes a video', () => {
  let postgres: OwnedPostgres;
  let owned: TestService;

  beforeAll(async () => {
    postgres = await startOwnedPostgres();
    owned = await startTestService({ DATABASE_URL: postgres.url, OPERATOR_STORAGE_URL: storageUrl() });
  });
  afterAll(async () => {
    await owned?.stop();
    await postgres?.remove();
  });

  it('marks the recording ready once the database is back, without a restart', async () => {
    const tenant = await createTenant(owned);
    const ownedKey = await tenant.key(['operator:devices:write', 'operator:tasks:write', 'operator:tasks:read']);
    const ownedApi = apiClient(owned.url, ownedKey);
    const device = await ownedApi('POST', '/v1/devices', { space_id: tenant.spaceId });
    expect(device.status).toBe(201);
    await stopStore();
    const submitted = await ownedApi('POST', `/v1/devices/${device.body.id}/tasks`, { prompt: `go to ${pages.url('/red')} then return the title` });
    expect(await waitForTaskEnd(ownedApi, submitted.body.id)).toMatchObject({ status: 'succeeded', result: 'red' });
    expect(await recordingStatus(submitted.body.id, owned)).toEqual(['recording']);

    // The store takes the video (at its next try) while the database is away.
    await postgres.stop();
    await startStore();
    const taskFolder = `task/${parsePublicId('task', submitted.body.id)!}`;
    const storedVideo = async () => (await readdir(directory, { recursive: true })).some((entry) => entry.includes(taskFolder) && entry.includes('.mp4'));
    await expect.poll(storedVideo, { timeout: 30_000, interval: 250 }).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await postgres.start();

    await expect.poll(() => recordingStatus(submitted.body.id, owned), { timeout: 30_000, interval: 500 }).toEqual(['ready']);
    const video = await fetch(`${owned.url}/v1/tasks/${submitted.body.id}/recording`, { headers: { Authorization: `Bearer ${ownedKey}` } });
    expect(video.status).toBe(200);
    await ownedApi('DELETE', `/v1/devices/${device.body.id}`);
  });
});
