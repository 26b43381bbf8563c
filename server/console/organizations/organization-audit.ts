import { z } from 'zod';
import { AuditEventSchema, listAuditEvents } from '../../domain/audit/list-audit';
import { operatorPrincipal } from '../../domain/console/operator-principal';
import { operatorProcedure } from '../console-procedures';
import { OrganizationAuditInputSchema } from './organization-schemas';

/** A page of the organization's audit log, newest first, as GET /v1/audit pages it. */
export const organizationAuditProcedure = operatorProcedure
  .input(OrganizationAuditInputSchema)
  .output(z.object({ data: z.array(AuditEventSchema), next_cursor: z.string() }))
  .query(({ ctx, input }) =>
    listAuditEvents(ctx.services.db, ctx.services.cursors, operatorPrincipal(input.org_id, ctx.operator.name), { limit: input.limit, cursor: input.cursor }),
  );
