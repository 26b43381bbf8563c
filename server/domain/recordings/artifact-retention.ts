import { and, eq, isNotNull, lt, sql } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { taskFiles, taskSteps } from '../../../db/schema';
import type { ObjectStore } from '../../storage';
import { deleteRecordingRow, expiredRecordings } from './recording-rows';

// Objects removed per kind and sweep: a backlog drains over several sweeps.
const BATCH = 200;

/**
 * Deletes recordings, step screenshots and downloaded files older than the retention
 * (OPERATOR_ARTIFACT_RETENTION_DAYS): the object first, then its record, so a crash in
 * between leaves a record whose object is gone (served as not found, swept again), never
 * an object nothing points at.
 */
export async function pruneArtifacts(db: Db, store: ObjectStore, retentionMs: number): Promise<{ recordings: number; screenshots: number; files: number }> {
  const cutoff = sql`now() - make_interval(secs => ${retentionMs / 1000})`;
  const recordings = await expiredRecordings(db, retentionMs, BATCH);
  for (const recording of recordings) {
    if (recording.status === 'ready') await store.delete(recording.objectKey);
    await deleteRecordingRow(db, recording.id);
  }
  const screenshots = await db
    .select({ taskId: taskSteps.taskId, seq: taskSteps.seq, key: taskSteps.screenshotKey })
    .from(taskSteps)
    .where(and(isNotNull(taskSteps.screenshotKey), lt(taskSteps.createdAt, cutoff)))
    .limit(BATCH);
  for (const step of screenshots) {
    await store.delete(step.key!);
    await db
      .update(taskSteps)
      .set({ screenshotKey: null })
      .where(and(eq(taskSteps.taskId, step.taskId), eq(taskSteps.seq, step.seq)));
  }
  const files = await db.select().from(taskFiles).where(lt(taskFiles.createdAt, cutoff)).limit(BATCH);
  for (const file of files) {
    await store.delete(file.objectKey);
    await db.delete(taskFiles).where(eq(taskFiles.id, file.id));
  }
  return { recordings: recordings.length, screenshots: screenshots.length, files: files.length };
}
