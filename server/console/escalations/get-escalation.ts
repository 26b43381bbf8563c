import { z } from 'zod';
import { escalationForOperator } from '../../domain/console/operator-live';
import { EscalationDetailSchema } from '../../domain/escalations/escalation-detail';
import { consoleStepScreenshotUrls } from '../console-artifact-urls';
import { operatorProcedure } from '../console-procedures';

/** One escalation of any organization with its task's prompt, status and steps, and its device (404 escalation_not_found). */
export const getEscalationProcedure = operatorProcedure
  .input(z.object({ id: z.string().max(200) }))
  .output(EscalationDetailSchema)
  .query(({ ctx, input }) => escalationForOperator(ctx.services.db, consoleStepScreenshotUrls, input.id));
