import { z } from 'zod';
import { PendingEscalationSchema } from '../../domain/console/operator-view-schemas';
import { pendingEscalations } from '../../domain/console/operator-views';
import { operatorProcedure } from '../console-procedures';
import { OrgIdSchema } from '../console-fields';

/** The escalations waiting for a person, of every organization or of one, oldest first (at most 100). */
export const listPendingEscalationsProcedure = operatorProcedure
  // The inbox's filter: one organization's escalations, or (absent) every organization's.
  .input(z.object({ org_id: OrgIdSchema.optional() }).optional())
  .output(z.array(PendingEscalationSchema))
  .query(({ ctx, input }) => pendingEscalations(ctx.services.db, { orgId: input?.org_id }));
