import { and, desc, eq, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { Db } from '../../../db/client';
import { escalations, escalationStatuses } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { parsePublicId } from '../ids';
import type { Principal } from '../keys/principal';
import { olderThan, PageQuerySchema, type CursorCodec, type Page } from '../pagination/cursor';
import { listSpace } from '../spaces/space-access';
import { loadEscalationForCaller, toEscalationResource, type Escalation } from './escalation-resource';

export const ListEscalationsQuerySchema = PageQuerySchema.extend({
  status: z.enum(escalationStatuses).optional(),
  task_id: z.string().max(200).optional(),
  space_id: z.uuid().optional(),
}).strict();
export type ListEscalationsQuery = z.infer<typeof ListEscalationsQuerySchema>;

/** GET /v1/escalations: the organization's escalations, newest first, filtered by status and task. */
export async function listEscalations(db: Db, cursors: CursorCodec, principal: Principal, query: ListEscalationsQuery): Promise<Page<Escalation>> {
  const spaceId = listSpace(principal, query.space_id);
  const taskId = query.task_id === undefined ? null : parsePublicId('task', query.task_id);
  if (query.task_id !== undefined && taskId === null) {
    throw new ApiError('invalid_request', { param: 'task_id', message: 'task_id must be a task id (task_<uuid>).' });
  }
  const list = `escalations:${principal.orgId}:${spaceId ?? '*'}:${query.status ?? '*'}:${taskId ?? '*'}`;
  const position = query.cursor === undefined ? null : cursors.decode(list, query.cursor);
  const conditions: (SQL | undefined)[] = [
    eq(escalations.orgId, principal.orgId),
    spaceId === null ? undefined : eq(escalations.spaceId, spaceId),
    query.status === undefined ? undefined : eq(escalations.status, query.status),
    taskId === null ? undefined : eq(escalations.taskId, taskId),
    olderThan(escalations.createdAt, escalations.id, position),
  ];
  const rows = await db
    .select()
    .from(escalations)
    .where(and(...conditions))
    .orderBy(desc(escalations.createdAt), desc(escalations.id))
    .limit(query.limit + 1);
  return cursors.page(list, rows, query.limit, toEscalationResource);
}

export async function getEscalation(db: Db, principal: Principal, publicId: string): Promise<Escalation> {
  return toEscalationResource(await loadEscalationForCaller(db, principal, publicId));
}
