import { and, desc, eq } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { recordings, type RecordingSubject } from '../../../db/schema';
import { latestReadyRecording, type RecordingRow } from './recording-rows';

// A task's end is written before its run's video is stored (its encoding, after the
// encodings waiting before it, and the store's write: a second or so on a quiet host,
// seconds more on a saturated one), so
// a client told that the task ended may ask before it is there: it is waited for this long.
const STORING_WAIT_MS = 15_000;
const STORING_POLL_MS = 100;

/**
 * The subject's latest finished recording, or null while none is. When the subject has
 * stopped recording (`stopped`: a task that is not running) and its latest recording is
 * still being stored, that one is waited for: what a client told of the end asks for.
 */
export async function storedRecording(db: Db, kind: RecordingSubject, subjectId: string, stopped: boolean): Promise<RecordingRow | null> {
  const deadline = Date.now() + STORING_WAIT_MS;
  for (;;) {
    const latest = await latestRecording(db, kind, subjectId);
    if (latest?.status === 'ready') return latest;
    if (latest?.status !== 'recording' || !stopped || Date.now() >= deadline) return latestReadyRecording(db, kind, subjectId);
    await new Promise((resolve) => setTimeout(resolve, STORING_POLL_MS));
  }
}

/** Whether storedRecording() has, or will have in a moment, a recording to answer with. */
export async function hasStoredRecording(db: Db, kind: RecordingSubject, subjectId: string, stopped: boolean): Promise<boolean> {
  const latest = await latestRecording(db, kind, subjectId);
  if (latest?.status === 'ready' || (latest?.status === 'recording' && stopped)) return true;
  return (await latestReadyRecording(db, kind, subjectId)) !== null;
}

async function latestRecording(db: Db, kind: RecordingSubject, subjectId: string): Promise<RecordingRow | undefined> {
  const [latest] = await db
    .select()
    .from(recordings)
    .where(and(eq(recordings.subjectKind, kind), eq(recordings.subjectId, subjectId)))
    .orderBy(desc(recordings.createdAt))
    .limit(1);
  return latest;
}
