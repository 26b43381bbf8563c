import { bigint, index, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestampMs } from './columns';

/** A file a task's page downloaded, kept in the object store (GET /v1/tasks/{id}/files). */
export const taskFiles = pgTable(
  'task_files',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    taskId: uuid('task_id').notNull(),
    /** The name the page suggested, cleaned (task-files.ts): no path, no control characters. */
    name: text('name').notNull(),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
    contentType: text('content_type').notNull(),
    sha256: text('sha256').notNull(),
    objectKey: text('object_key').notNull(),
    createdAt: timestampMs('created_at').notNull().defaultNow(),
  },
  (table) => [index('task_files_task_idx').on(table.taskId, table.createdAt), index('task_files_created_idx').on(table.createdAt)],
);
