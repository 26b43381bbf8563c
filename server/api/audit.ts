import { z } from 'zod';
import { AuditEventSchema, listAuditEvents } from '../domain/audit/list-audit';
import { PageQuerySchema } from '../domain/pagination/cursor';
import { scoped } from '../trpc/procedures';

export const listAuditEventsProcedure = scoped('operator:audit:read', 'operator:webhooks:read')
  .meta({ openapi: { method: 'GET', path: '/audit', tags: ['audit'], summary: 'Read the audit trail, newest first' } })
  .input(
    PageQuerySchema.extend({
      action: z.string().min(1).max(200).optional(),
      resource_id: z.string().min(1).max(200).optional(),
      space_id: z.uuid().optional(),
    }).strict(),
  )
  .output(z.object({ data: z.array(AuditEventSchema), next_cursor: z.string() }))
  .query(({ ctx, input }) => listAuditEvents(ctx.services.db, ctx.services.cursors, ctx.principal, input));
