import { z } from 'zod';
import { OperatorTaskViewSchema } from '../../domain/console/operator-view-schemas';
import { operatorTaskView } from '../../domain/console/organization-activity';
import { consoleTaskArtifactUrls } from '../console-artifact-urls';
import { operatorProcedure } from '../console-procedures';

/** A task of any organization with its steps, escalations and recording, its bytes on the console's routes (404 task_not_found). */
export const getTaskProcedure = operatorProcedure
  .input(z.object({ task_id: z.string().max(200) }))
  .output(OperatorTaskViewSchema)
  .query(({ ctx, input }) => operatorTaskView(ctx.services.db, consoleTaskArtifactUrls, input.task_id));
