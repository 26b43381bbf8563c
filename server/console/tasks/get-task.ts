import { OperatorTaskViewSchema } from '../../domain/console/operator-view-schemas';
import { operatorTaskView } from '../../domain/console/organization-activity';
import { consoleTaskArtifactUrls } from '../console-artifact-urls';
import { operatorProcedure } from '../console-procedures';
import { TaskInputSchema } from './task-schemas';

/** A task of any organization with its steps, escalations and recording, its bytes on the console's routes (404 task_not_found). */
export const getTaskProcedure = operatorProcedure
  .input(TaskInputSchema)
  .output(OperatorTaskViewSchema)
  .query(({ ctx, input }) => operatorTaskView(ctx.services.db, consoleTaskArtifactUrls, input.task_id));
