import { count } from 'drizzle-orm';
import { connectDatabase } from '../db/client';
import { recordings } from '../db/schema';
import type { ServiceProcess } from '../test/support/service-process';

// A benchmark's figures count only with its recordings done: the recorder encodes a
// recording after its run ends (recorder.ts), and that CPU belongs to the run.

// How long the recordings of a benchmark's runs may take to be stored after its last run.
const RECORDINGS_STORED_WITHIN_MS = 120_000;

/** What became of a service's recordings, and how long the wait for them took. */
export interface RecordingsSettled {
  ready: number;
  failed: number;
  storedAfterMs: number;
}

/**
 * Waits until no recording of the service is still being made or encoded, and counts
 * how they ended. One not stored in time fails the benchmark.
 */
export async function untilRecordingsSettled(service: ServiceProcess): Promise<RecordingsSettled> {
  const database = connectDatabase(service.database.url, 1);
  const startedAt = performance.now();
  try {
    for (;;) {
      const rows = await database.db.select({ status: recordings.status, count: count() }).from(recordings).groupBy(recordings.status);
      const of = (status: string) => rows.find((row) => row.status === status)?.count ?? 0;
      const settled = { ready: of('ready'), failed: of('failed'), storedAfterMs: Math.round(performance.now() - startedAt) };
      if (of('recording') === 0) return settled;
      if (settled.storedAfterMs > RECORDINGS_STORED_WITHIN_MS) throw new Error(`${of('recording')} recordings not stored ${RECORDINGS_STORED_WITHIN_MS} ms after the last run`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await database.close();
  }
}

/** untilRecordingsSettled for the task benchmarks, where a recording that failed fails the benchmark. */
export async function untilRecordingsStored(service: ServiceProcess): Promise<RecordingsSettled> {
  const settled = await untilRecordingsSettled(service);
  if (settled.failed > 0) throw new Error(`${settled.failed} recordings failed`);
  return settled;
}
