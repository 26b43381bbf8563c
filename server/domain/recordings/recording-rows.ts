import { and, desc, eq, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { recordings, type RecordingSubject } from '../../../db/schema';
import { dbNow } from '../db-clock';

export type RecordingRow = typeof recordings.$inferSelect;

/** What a recording is of: a task run or a live-view session (a CDP session later). */
export interface RecordingSubjectRef {
  kind: RecordingSubject;
  /** The subject's bare UUID. */
  id: string;
  orgId: string;
}

export const RECORDING_CONTENT_TYPE = 'video/mp4';

/** Where the finished video is stored: one object per run of the subject. */
export function recordingObjectKey(subject: RecordingSubjectRef, recordingId: string): string {
  return `recordings/${subject.kind}/${subject.id}/${recordingId}.mp4`;
}

/** A recording this host starts writing now. */
export async function insertRecording(db: Db, subject: RecordingSubjectRef, recordingId: string, hostId: string): Promise<RecordingRow> {
  const [row] = await db
    .insert(recordings)
    .values({
      id: recordingId,
      orgId: subject.orgId,
      subjectKind: subject.kind,
      subjectId: subject.id,
      hostId,
      status: 'recording',
      objectKey: recordingObjectKey(subject, recordingId),
      contentType: RECORDING_CONTENT_TYPE,
    })
    .returning();
  return row!;
}

export async function markRecordingReady(db: Db, recordingId: string, facts: { durationMs: number; sizeBytes: number; width: number | null; height: number | null }): Promise<void> {
  await db
    .update(recordings)
    .set({ status: 'ready', durationMs: facts.durationMs, sizeBytes: facts.sizeBytes, width: facts.width, height: facts.height, finishedAt: dbNow() })
    .where(eq(recordings.id, recordingId));
}

export async function markRecordingFailed(db: Db, recordingId: string): Promise<void> {
  await db.update(recordings).set({ status: 'failed', finishedAt: dbNow() }).where(eq(recordings.id, recordingId));
}

/** Recordings this host was writing when it stopped without finishing them (a crash). */
export async function interruptedRecordings(db: Db, hostId: string): Promise<RecordingRow[]> {
  return db
    .select()
    .from(recordings)
    .where(and(eq(recordings.hostId, hostId), eq(recordings.status, 'recording')));
}

/** The subject's latest finished recording; null while none is (or while the first is still being written). */
export async function latestReadyRecording(db: Db, kind: RecordingSubject, subjectId: string): Promise<RecordingRow | null> {
  const [row] = await db
    .select()
    .from(recordings)
    .where(and(eq(recordings.subjectKind, kind), eq(recordings.subjectId, subjectId), eq(recordings.status, 'ready')))
    .orderBy(desc(recordings.createdAt))
    .limit(1);
  return row ?? null;
}

/**
 * Recordings past retention, at most `limit`: finished ones by their end, and ones still
 * `recording` by their start (their host never came back to finish them).
 */
export async function expiredRecordings(db: Db, retentionMs: number, limit: number): Promise<RecordingRow[]> {
  const cutoff = sql`now() - make_interval(secs => ${retentionMs / 1000})`;
  return db
    .select()
    .from(recordings)
    .where(or(lt(recordings.finishedAt, cutoff), and(eq(recordings.status, 'recording'), lt(recordings.createdAt, cutoff))))
    .limit(limit);
}

export async function deleteRecordingRow(db: Db, recordingId: string): Promise<void> {
  await db.delete(recordings).where(eq(recordings.id, recordingId));
}
