import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { connectDatabase, type Database } from '../../db/client';
import { killOrphans } from '../../server/browser';
import { parentPid } from '../../server/os/processes';
import { createApiKey, createOrganization, createSpace } from '../../server/domain/orgs/operator-admin';
import { startColourPages } from '../support/colour-pages';
import { freePort } from '../support/free-port';
import { startHostProcess, type HostProcess } from '../support/host-process';
import { apiClient } from '../support/http';
import { waitForTaskEnd } from '../support/task-helpers';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { ffprobe, frameColors, isRed } from '../support/video-probe';

// A server killed with SIGKILL while it records a task and a CDP connection, in both ways a
// recording keeps its frames: in a spool until the subject ends (the default), or in an
// ffmpeg already encoding them (past OPERATOR_RECORDING_DEFER_SECS). No ffmpeg may outlive
// it for long, and the next start of the same data directory stores what was recorded.

let database: TestDatabase;
let db: Database;
let dataDir: string;
let pages: Awaited<ReturnType<typeof startColourPages>>;
let port: number;
let server: HostProcess | null = null;

function startServer(env: Record<string, string> = {}): Promise<HostProcess> {
  return startHostProcess({
    databaseUrl: database.url,
    dataDir,
    port,
    env: {
      // The final SIGTERM closes the browsers rather than handing them over to a next start.
      OPERATOR_RETIRE_ON_STOP: 'true',
      OPERATOR_TASK_LEASE_SECS: '2',
      OPERATOR_ALLOW_PRIVATE_DESTINATIONS: 'true',
      ...env,
    },
  });
}

/** The files of a kind in the recordings' working folder. */
async function recordingFiles(suffix: string): Promise<string[]> {
  return (await readdir(path.join(dataDir, 'recordings')).catch(() => [])).filter((name) => name.endsWith(suffix));
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(tmpdir(), 'operator-recording-crash-'));
  pages = await startColourPages();
  port = await freePort();
});
afterAll(async () => {
  await server?.stop('SIGTERM');
  await killOrphans(dataDir);
  await db?.close();
  await pages?.close();
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

/**
 * A task on a red page that waits for a text that never comes, and a CDP connection on a
 * second device, recorded on a server started with `env`; `whileRecording` runs once both
 * recordings keep frames, then the server is killed with SIGKILL and started again.
 */
async function recordThenKill(env: Record<string, string>, whileRecording: () => Promise<void>): Promise<void> {
  server = await startServer(env);
  db ??= connectDatabase(database.url, 2);
  const { org_id: orgId } = await createOrganization(db.db, { name: 'Recording crash org', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: null });
  const { space_id: spaceId } = await createSpace(db.db, orgId, 'default');
  const { key } = await createApiKey(db.db, { orgId, scopes: ['operator:devices:write', 'operator:tasks:read', 'operator:tasks:write', 'operator:sessions:write', 'operator:sessions:control'], spaceIds: [], env: 'test' });
  const api = apiClient(`http://127.0.0.1:${port}`, key);
  const device = await api('POST', '/v1/devices', { space_id: spaceId });
  const submitted = await api('POST', `/v1/devices/${device.body.id}/tasks`, { prompt: `go to ${pages.url('/red')} then wait for "a text that never comes"` });
  expect(submitted.status).toBe(202);
  // A CDP connection on a second device, recorded too.
  const cdpDevice = await api('POST', '/v1/devices', { space_id: spaceId });
  const cdpSession = await api('POST', `/v1/devices/${cdpDevice.body.id}/cdp`, {});
  expect(cdpSession.status).toBe(201);
  const cdpUrl = new URL(cdpSession.body.cdp_url);
  const cdpClient = new WebSocket(`ws://127.0.0.1:${port}${cdpUrl.pathname}${cdpUrl.search}`);
  const cdpClosed = new Promise<void>((resolve) => cdpClient.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    cdpClient.once('open', () => resolve());
    cdpClient.once('error', reject);
  });

  await whileRecording();
  await server!.stop('SIGKILL');
  await cdpClosed;

  server = await startServer(env);
  // The task continued on its kept page after the crash, still waiting for its text.
  const ended = await waitForTaskEnd(api, submitted.body.id, 30_000);
  expect(ended.result.error).toBe('action_timeout');
  const response = await fetch(`http://127.0.0.1:${port}/v1/tasks/${submitted.body.id}/recording`, { headers: { Authorization: `Bearer ${key}` } });
  expect(response.status).toBe(200);
  const file = path.join(dataDir, 'downloaded.mp4');
  await writeFile(file, Buffer.from(await response.arrayBuffer()));
  expect((await ffprobe(file)).duration).toBeGreaterThan(1.5);
  expect((await frameColors(file)).filter(isRed).length).toBeGreaterThan(5);
  // The CDP connection's recording too, though nothing ever closed the connection cleanly.
  const cdpVideo = await fetch(`http://127.0.0.1:${port}/v1/cdp_sessions/${cdpSession.body.id}/recording`, { headers: { Authorization: `Bearer ${key}` } });
  expect(cdpVideo.status).toBe(200);
  const cdpFile = path.join(dataDir, 'downloaded-cdp.mp4');
  await writeFile(cdpFile, Buffer.from(await cdpVideo.arrayBuffer()));
  expect((await ffprobe(cdpFile)).duration).toBeGreaterThan(1.5);
  // Nothing is left in the recordings' working folder.
  expect(await readdir(path.join(dataDir, 'recordings'))).toEqual([]);
  await server.stop('SIGTERM');
  server = null;
}

describe('a server killed while it records', () => {
  it('runs no ffmpeg while recordings keep their frames, and its restart encodes and stores what they kept', async () => {
    await recordThenKill({}, async () => {
      // Each recording's spool exists from its first frame.
      await expect.poll(() => recordingFiles('.frames'), { timeout: 15_000, interval: 100 }).toHaveLength(2);
      // Some red seconds on the record, still page and all.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(await recordingFiles('.pid')).toEqual([]);
    });
  }, 240_000);

  it('leaves no ffmpeg running past a recording that was encoding as it went, and its restart stores the video', async () => {
    await recordThenKill({ OPERATOR_RECORDING_DEFER_SECS: '1' }, async () => {
      // A second in, each recording starts its encoder, its kept frames first; its pid file names it.
      let ffmpegPids: number[] = [];
      const deadline = Date.now() + 15_000;
      while (ffmpegPids.length < 2 && Date.now() < deadline) {
        const pidFiles = await recordingFiles('.pid');
        ffmpegPids = (await Promise.all(pidFiles.map((name) => readFile(path.join(dataDir, 'recordings', name), 'utf8').catch(() => '0')))).map(Number).filter((pid) => pid > 0);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      // The task's and the CDP connection's.
      expect(ffmpegPids).toHaveLength(2);
      // Once ffmpeg holds what was kept, the spools go.
      await expect.poll(() => recordingFiles('.frames'), { timeout: 15_000, interval: 100 }).toEqual([]);
      // Some red seconds on the record.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(ffmpegPids.every(isRunning)).toBe(true);
      // Started by the server's spawner (child-spawner.ts), which must not outlive it either.
      const spawnerPids = [...new Set(await Promise.all(ffmpegPids.map(parentPid)))].filter((pid) => pid !== null);
      expect(spawnerPids).toHaveLength(1);
      expect(spawnerPids[0]).not.toBe(server!.pid);
      const killed = server!;
      await killed.stop('SIGKILL');
      // Its stdin closed with the server: ffmpeg finishes the file and exits by itself.
      const gone = Date.now() + 10_000;
      while ([...ffmpegPids, ...spawnerPids].some(isRunning) && Date.now() < gone) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(ffmpegPids.some(isRunning)).toBe(false);
      expect(spawnerPids.some(isRunning)).toBe(false);
    });
  }, 240_000);
});
