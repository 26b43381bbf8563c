import { OperatorTaskViewSchema } from '../../domain/console/operator-view-schemas';
import { operatorTaskView } from '../../domain/console/organization-activity';
import { operatorProcedure } from '../console-procedures';
import { TaskInputSchema } from './task-schemas';

/** A task of any organization with its steps and escalations (404 task_not_found). */
export const getTaskProcedure = operatorProcedure
  .input(TaskInputSchema)
  .output(OperatorTaskViewSchema)
  .query(({ ctx, input }) => operatorTaskView(ctx.services.db, ctx.services.config.http.publicUrl, input.task_id));
