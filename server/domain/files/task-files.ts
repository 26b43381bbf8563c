import { and, desc, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Db, DbOrTx } from '../../../db/client';
import { taskFiles } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { parsePublicId, toPublicId } from '../ids';
import type { Principal } from '../keys/principal';
import { olderThan, type CursorCodec, type Page, type PageQuery } from '../pagination/cursor';
import { loadTaskForCaller } from '../tasks/load-task';
import { iso } from '../time';

/** A file a task's page downloaded (GET /v1/tasks/{id}/files). */
export const TaskFileSchema = z.object({
  object: z.literal('file'),
  id: z.string(),
  task_id: z.string(),
  name: z.string(),
  size: z.number().int(),
  content_type: z.string(),
  sha256: z.string(),
  created_at: z.string(),
});
export type TaskFile = z.infer<typeof TaskFileSchema>;
export type TaskFileRow = typeof taskFiles.$inferSelect;

export function toTaskFileResource(row: TaskFileRow): TaskFile {
  return {
    object: 'file',
    id: toPublicId('file', row.id),
    task_id: toPublicId('task', row.taskId),
    name: row.name,
    size: row.sizeBytes,
    content_type: row.contentType,
    sha256: row.sha256,
    created_at: iso(row.createdAt),
  };
}

export function taskFileObjectKey(taskId: string, fileId: string): string {
  return `tasks/${taskId}/files/${fileId}`;
}

export async function insertTaskFile(db: Db, row: typeof taskFiles.$inferInsert): Promise<void> {
  await db.insert(taskFiles).values(row);
}

/** Bytes of downloads a task has kept so far (its cap is OPERATOR_DOWNLOAD_MAX_TASK_BYTES). */
export async function taskBytesKept(db: DbOrTx, taskId: string): Promise<number> {
  const [row] = await db
    .select({ total: sql<string>`coalesce(sum(${taskFiles.sizeBytes}), 0)` })
    .from(taskFiles)
    .where(eq(taskFiles.taskId, taskId));
  return Number(row?.total ?? 0);
}

/** GET /v1/tasks/{id}/files: newest first, keyset paged; the task's tenancy as GET /v1/tasks/{id}. */
export async function listTaskFiles(db: Db, cursors: CursorCodec, principal: Principal, taskPublicId: string, query: PageQuery): Promise<Page<TaskFile>> {
  const task = await loadTaskForCaller(db, principal, taskPublicId);
  const list = `task-files:${principal.orgId}:${task.id}`;
  const position = query.cursor === undefined ? null : cursors.decode(list, query.cursor);
  const rows = await db
    .select()
    .from(taskFiles)
    .where(and(eq(taskFiles.taskId, task.id), olderThan(taskFiles.createdAt, taskFiles.id, position)))
    .orderBy(desc(taskFiles.createdAt), desc(taskFiles.id))
    .limit(query.limit + 1);
  return cursors.page(list, rows, query.limit, toTaskFileResource);
}

/** One file of the caller's task; another task's or organization's id is 404 file_not_found. */
export async function loadTaskFileForCaller(db: Db, principal: Principal, taskPublicId: string, filePublicId: string): Promise<TaskFileRow> {
  const task = await loadTaskForCaller(db, principal, taskPublicId);
  const id = parsePublicId('file', filePublicId);
  if (id === null) throw new ApiError('file_not_found');
  const [row] = await db
    .select()
    .from(taskFiles)
    .where(and(eq(taskFiles.id, id), eq(taskFiles.taskId, task.id)));
  if (row === undefined) throw new ApiError('file_not_found');
  return row;
}

const MAX_NAME_LENGTH = 200;

/**
 * The page's suggested file name made safe to store and to send back in a
 * Content-Disposition: its last path segment, without control characters, quotes or
 * backslashes, at most 200 characters; `download` when nothing is left.
 */
export function safeFileName(suggested: string): string {
  const last = suggested.split(/[/\\]/).pop() ?? '';
  const cleaned = last
    .normalize('NFC')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f-\u009f"'`<>|*?:;%]/g, '_')
    .replace(/^[.\s]+|\s+$/g, '')
    .slice(0, MAX_NAME_LENGTH);
  return cleaned === '' ? 'download' : cleaned;
}

const CONTENT_TYPES: Record<string, string> = {
  pdf: 'application/pdf',
  csv: 'text/csv',
  txt: 'text/plain',
  json: 'application/json',
  zip: 'application/zip',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xml: 'application/xml',
  html: 'text/html',
};

/** By the name's extension; the bytes are always sent as an attachment, never rendered. */
export function contentTypeFor(name: string): string {
  const extension = /\.([A-Za-z0-9]{1,8})$/.exec(name)?.[1]?.toLowerCase();
  return (extension === undefined ? undefined : CONTENT_TYPES[extension]) ?? 'application/octet-stream';
}

/** `attachment` with the name as ASCII and, for the rest, RFC 5987's UTF-8 form. */
export function attachmentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}
