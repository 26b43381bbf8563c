import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type Database } from '../../../db/client';
import { applyMigrations } from '../../../db/migrate';
import { createTestDatabase, type TestDatabase } from '../../../test/support/test-database';
import { createOrganization } from '../orgs/operator-admin';
import { insertRecording, markRecordingFailed, markRecordingReady, type RecordingSubjectRef } from './recording-rows';
import { storedRecording } from './stored-recording';

describe('storedRecording on a real database', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let orgId: string;

  beforeAll(async () => {
    testDatabase = await createTestDatabase();
    database = connectDatabase(testDatabase.url, 4);
    await applyMigrations(database);
    ({ org_id: orgId } = await createOrganization(database.db, { name: 'recordings', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: null }));
  });

  afterAll(async () => {
    await database.close();
    await testDatabase.drop();
  });

  const subject = (): RecordingSubjectRef => ({ kind: 'task', id: randomUUID(), orgId });
  const facts = { durationMs: 1_000, sizeBytes: 10, width: 800, height: 500 };

  it('waits, for a subject that stopped recording, until its latest recording is stored', async () => {
    const task = subject();
    const earlier = await insertRecording(database.db, task, randomUUID(), 'host');
    await markRecordingReady(database.db, earlier.id, facts);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const latest = await insertRecording(database.db, task, randomUUID(), 'host');
    const started = performance.now();
    setTimeout(() => void markRecordingReady(database.db, latest.id, facts), 400);
    const found = await storedRecording(database.db, 'task', task.id, true);
    expect(found?.id).toBe(latest.id);
    expect(performance.now() - started).toBeGreaterThanOrEqual(350);
  });

  it('answers at once for a subject still recording: the latest stored one, or none', async () => {
    const task = subject();
    const earlier = await insertRecording(database.db, task, randomUUID(), 'host');
    await markRecordingReady(database.db, earlier.id, facts);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await insertRecording(database.db, task, randomUUID(), 'host');
    const started = performance.now();
    expect((await storedRecording(database.db, 'task', task.id, false))?.id).toBe(earlier.id);
    const fresh = subject();
    await insertRecording(database.db, fresh, randomUUID(), 'host');
    expect(await storedRecording(database.db, 'task', fresh.id, false)).toBeNull();
    expect(performance.now() - started).toBeLessThan(300);
  });

  it('answers the latest stored one when the latest recording failed', async () => {
    const task = subject();
    const earlier = await insertRecording(database.db, task, randomUUID(), 'host');
    await markRecordingReady(database.db, earlier.id, facts);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const failed = await insertRecording(database.db, task, randomUUID(), 'host');
    await markRecordingFailed(database.db, failed.id);
    expect((await storedRecording(database.db, 'task', task.id, true))?.id).toBe(earlier.id);
  });
});
