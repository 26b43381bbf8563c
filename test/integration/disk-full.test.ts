import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startColourPages } from '../support/colour-pages';
import { apiClient, type ApiCall } from '../support/http';
import { readStream, waitForTaskEnd } from '../support/task-helpers';
import { createTenant, startTestService, type TestService } from '../support/test-service';

// The data directory's disk fills up (a real tmpfs of 160 MiB that the test fills): a new
// device is refused with 503 capacity_exhausted and Retry-After, and changes nothing, where
// Chromium used to fail for no stated reason and the create answered 500; a device already
// running keeps running tasks, whose step pictures wait for room; once space is freed,
// devices start and the pictures are stored. Mounting needs root.

const asRoot = process.getuid?.() === 0;
let mount = '';
let pages: Awaited<ReturnType<typeof startColourPages>>;
let test: TestService;
let key: string;
let api: ApiCall;
let spaceId: string;
const logLines: string[] = [];

beforeAll(async () => {
  if (!asRoot) return;
  mount = mkdtempSync(path.join(tmpdir(), 'operator-disk-full-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=160m,mode=0755', 'tmpfs', mount]);
  pages = await startColourPages();
  test = await startTestService({ OPERATOR_DATA_DIR: mount, OPERATOR_LOG_LEVEL: 'warn' }, { logDestination: { write: (line) => void logLines.push(line) } });
  const tenant = await createTenant(test);
  spaceId = tenant.spaceId;
  key = await tenant.key(['operator:devices:read', 'operator:devices:write', 'operator:tasks:read', 'operator:tasks:write']);
  api = apiClient(test.url, key);
});

afterAll(async () => {
  await test?.stop();
  await pages?.close();
  if (mount !== '') {
    execFileSync('umount', ['--lazy', mount]);
    rmSync(mount, { recursive: true, force: true });
  }
});

/** Writes zeros to `file` until the disk refuses more. */
function fillDisk(file: string): void {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(2 ** 20);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
  } finally {
    closeSync(fd);
  }
}

async function runTask(deviceId: string): Promise<{ taskId: string; seqs: number[] }> {
  const submitted = await api('POST', `/v1/devices/${deviceId}/tasks`, { prompt: `go to ${pages.url('/red?after=300')} then wait for "Ready"; return the title` });
  expect(submitted.status).toBe(202);
  expect(await waitForTaskEnd(api, submitted.body.id)).toMatchObject({ status: 'succeeded', result: 'red' });
  const steps = (await readStream(`${test.url}/v1/tasks/${submitted.body.id}/events`, key)).frames.filter((frame) => frame.event === 'step');
  const seqs = steps.map((frame) => JSON.parse(frame.data!)).filter((step) => step.screenshot_url !== null).map((step) => step.seq as number);
  expect(seqs.length).toBeGreaterThan(0);
  return { taskId: submitted.body.id, seqs };
}

async function liveDeviceIds(): Promise<string[]> {
  const listed = await api('GET', `/v1/devices?space_id=${spaceId}&limit=100`);
  expect(listed.status).toBe(200);
  return (listed.body.data as { id: string; status: string }[]).filter((device) => device.status !== 'terminated').map((device) => device.id).sort();
}

it.skipIf(!asRoot)('refuses new devices with 503 capacity_exhausted while the data directory is full, keeps running ones working, and recovers once space is freed', async () => {
  const running = await api('POST', '/v1/devices', { space_id: spaceId });
  expect(running.status).toBe(201);
  const before = await liveDeviceIds();

  const filler = path.join(mount, 'filler');
  fillDisk(filler);
  const refused = await api('POST', '/v1/devices', { space_id: spaceId });
  expect(refused.status).toBe(503);
  expect(refused.headers.get('retry-after')).toBe('60');
  expect(refused.body.error.code).toBe('capacity_exhausted');
  expect(await liveDeviceIds()).toEqual(before);
  const lines = logLines.map((line) => JSON.parse(line) as { msg: string; freeBytes?: number });
  expect(lines.filter((line) => line.msg === "no browser can start: the data directory's disk is full")).toHaveLength(1);
  expect(lines.filter((line) => line.msg === 'device browser failed to start')).toEqual([]);

  // The device that runs keeps working; its pictures wait in memory for room.
  const during = await runTask(running.body.id);

  rmSync(filler);
  const created = await api('POST', '/v1/devices', { space_id: spaceId });
  expect(created.status).toBe(201);
  expect(created.body.status).toBe('active');
  for (const seq of during.seqs) {
    await expect
      .poll(async () => (await fetch(`${test.url}/v1/tasks/${during.taskId}/steps/${seq}/screenshot`, { headers: { Authorization: `Bearer ${key}` } })).status, { timeout: 60_000, interval: 500 })
      .toBe(200);
  }
  await runTask(created.body.id);
});
