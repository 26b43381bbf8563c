import { z } from 'zod';
import { PendingEscalationSchema } from '../../domain/console/operator-view-schemas';
import { pendingEscalations } from '../../domain/console/operator-views';
import { operatorProcedure } from '../console-procedures';
import { PendingEscalationsInputSchema } from './escalation-schemas';

/** The escalations waiting for a person, of every organization or of one, oldest first (at most 100). */
export const listPendingEscalationsProcedure = operatorProcedure
  .input(PendingEscalationsInputSchema)
  .output(z.array(PendingEscalationSchema))
  .query(({ ctx, input }) => pendingEscalations(ctx.services.db, { orgId: input?.org_id }));
