import { index, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestampMs } from './columns';

// `cdp_session`: for recordings of CDP sessions (issue 14 part 1), which call Recorder.start the same way.
export const recordingSubjects = ['task', 'session', 'cdp_session'] as const;
export type RecordingSubject = (typeof recordingSubjects)[number];

/**
 * - `recording`: ffmpeg is writing it on `host_id` (to a file in that host's data directory);
 * - `ready`: stored under `object_key`;
 * - `failed`: nothing usable was kept.
 */
export const recordingStatuses = ['recording', 'ready', 'failed'] as const;
export type RecordingStatus = (typeof recordingStatuses)[number];

/** The video of one task run or one live-view session (server/recording/). */
export const recordings = pgTable(
  'recordings',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    subjectKind: text('subject_kind', { enum: recordingSubjects }).notNull(),
    subjectId: uuid('subject_id').notNull(),
    /** The host whose recorder writes it, so that host's restart finishes what it left. */
    hostId: text('host_id').notNull(),
    status: text('status', { enum: recordingStatuses }).notNull(),
    objectKey: text('object_key').notNull(),
    contentType: text('content_type').notNull(),
    durationMs: integer('duration_ms'),
    sizeBytes: integer('size_bytes'),
    width: integer('width'),
    height: integer('height'),
    createdAt: timestampMs('created_at').notNull().defaultNow(),
    finishedAt: timestampMs('finished_at'),
  },
  (table) => [
    // One per run: a task resumed after a human's answer, or a session watched again, adds one.
    index('recordings_subject_idx').on(table.subjectKind, table.subjectId, table.createdAt),
    index('recordings_host_status_idx').on(table.hostId, table.status),
    index('recordings_finished_idx').on(table.finishedAt),
  ],
);
