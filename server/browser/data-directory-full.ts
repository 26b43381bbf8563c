import { freeBytes } from '../os/free-space.js';
import { CapacityExhaustedError } from './pool.js';

/**
 * Below this, no new browser starts on the data directory's disk: a profile takes several
 * MiB at its first start, and a Chromium that meets a full disk fails in ways that say
 * nothing of the cause.
 */
export const MIN_FREE_BYTES = 64 * 2 ** 20;

// Space comes back when an operator frees it or recordings are uploaded: not within seconds.
const RETRY_AFTER_SECONDS = 60;

/** The host cannot start another browser because its data directory's disk is (nearly) full: 503 capacity_exhausted, not a 500. */
export class DataDirectoryFullError extends CapacityExhaustedError {
  constructor(readonly freeBytes: number) {
    super(RETRY_AFTER_SECONDS, `the data directory's disk has ${Math.floor(freeBytes / 2 ** 20)} MiB free; a browser needs ${MIN_FREE_BYTES / 2 ** 20} MiB`);
    this.name = 'DataDirectoryFullError';
  }
}

function isNoSpace(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/** Throws DataDirectoryFullError when the disk holding `dir` is short of room, or `failure` (a launch's) was a full disk's. */
export async function requireRoomFor(dir: string, failure?: unknown): Promise<void> {
  const free = await freeBytes(dir);
  if (free < MIN_FREE_BYTES || isNoSpace(failure)) throw new DataDirectoryFullError(free);
}
