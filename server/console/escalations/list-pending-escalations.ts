import { z } from 'zod';
import { PendingEscalationSchema } from '../../domain/console/operator-view-schemas';
import { pendingEscalations } from '../../domain/console/operator-views';
import { operatorProcedure } from '../console-procedures';

/** The escalations waiting for a person, of every organization, oldest first (at most 100). */
export const listPendingEscalationsProcedure = operatorProcedure.output(z.array(PendingEscalationSchema)).query(({ ctx }) => pendingEscalations(ctx.services.db));
