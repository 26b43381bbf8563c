import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type Database } from '../../db/client';
import { applyMigrations } from '../../db/migrate';
import { recordings } from '../../db/schema';
import { DatabaseAvailability } from '../core/database-availability';
import { createLogger } from '../core/log';
import { createOrganization } from '../domain/orgs/operator-admin';
import { openObjectStore, parseStorageUrl, RetryingWrites } from '../storage';
import type { LiveFrame } from '../browser';
import { lavfiJpeg } from '../../test/support/lavfi-jpeg';
import { makeTempDir } from '../../test/support/browser-fixtures';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database';
import { Recorder, type FrameSource } from './recorder';

// The recorder over a real database, store and ffmpeg; its frames come from a screencast
// stood in for by frames sent by hand (the device's is device-views.ts's).
let testDatabase: TestDatabase;
let database: Database;
let temp: Awaited<ReturnType<typeof makeTempDir>>;
let orgId: string;
let recorder: Recorder;
let red: Buffer;

/** A screencast of one device whose frames the test sends; notes when it was opened. */
class HandSentFrames implements FrameSource {
  opened = false;
  listener: ((frame: LiveFrame) => void) | null = null;
  async watchFrames(_deviceId: string, listener: (frame: LiveFrame) => void) {
    this.opened = true;
    this.listener = listener;
    return { stop: () => (this.listener = null), repaint: async () => undefined };
  }
  send(jpeg: Buffer): void {
    this.listener?.({ data: jpeg.toString('base64'), width: 320, height: 200, swappedAt: Date.now() } as LiveFrame);
  }
}

beforeAll(async () => {
  testDatabase = await createTestDatabase();
  database = connectDatabase(testDatabase.url, 4);
  await applyMigrations(database);
  ({ org_id: orgId } = await createOrganization(database.db, { name: 'recorder', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: null }));
  temp = await makeTempDir('recorder-');
  const log = createLogger('silent');
  const writes = new RetryingWrites(openObjectStore(parseStorageUrl(null, temp.dir)), log);
  const databaseAvailability = new DatabaseAvailability(() => database.sql`select 1`, log);
  recorder = new Recorder({ db: database.db, databaseAvailability, writes, frames: new HandSentFrames(), hostId: 'host', dataDir: temp.dir, fps: 5, encodeLiveAfterMs: 60_000, log });
  red = await lavfiJpeg('color=c=red:s=320x200');
});

afterAll(async () => {
  await recorder?.stopAll();
  await database?.close();
  await testDatabase?.drop();
  await temp?.remove();
});

/** Polls `read` until it answers something, 20 s at most. */
async function until<T>(read: () => Promise<T | null | undefined>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (value != null) return value;
    if (Date.now() > deadline) throw new Error('nothing came in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('Recorder.start', () => {
  it('opens the screencast while the row is written, and keeps a frame that came before the row as the video\'s first', async () => {
    const frames = new HandSentFrames();
    const taskId = randomUUID();
    const starting = recorder.start({ kind: 'task', id: taskId, orgId }, 'device-1', frames);
    // Asked for before any round trip to the database: the run's first action waits for both.
    expect(frames.opened).toBe(true);
    frames.send(red);
    const recording = await starting;
    await recording.stop();
    // Encoded after its subject ended, a moment later.
    const row = await until(async () => {
      const [found] = await database.db.select().from(recordings).where(eq(recordings.subjectId, taskId));
      return found?.status === 'recording' ? null : found;
    });
    expect(row?.status).toBe('ready');
    expect(row?.width).toBe(320);
  });

  it('closes the screencast it opened when the row cannot be written, and records nothing', async () => {
    const frames = new HandSentFrames();
    // A subject id the uuid column refuses: the row's insert fails.
    const recording = await recorder.start({ kind: 'task', id: 'not-a-uuid', orgId }, 'device-1', frames);
    expect(frames.opened).toBe(true);
    await until(async () => (frames.listener === null ? true : null));
    expect(await recording.frameBetween(Date.now(), Promise.resolve(Date.now()))).toBeNull();
  });
});
