import { z } from 'zod';
import { OperatorTaskSchema, OperatorTaskViewSchema } from '../domain/console/operator-view-schemas';
import { operatorTaskView, recentTasks } from '../domain/console/organization-activity';
import { consoleTaskArtifactUrls } from './console-artifact-urls';
import { OrganizationInputSchema } from './console-fields';
import { operatorProcedure } from './console-procedures';

// The tasks of any organization, as the operator sees them.

/** The organization's latest 20 tasks, newest first. */
export const listRecentTasksProcedure = operatorProcedure
  .input(OrganizationInputSchema)
  .output(z.array(OperatorTaskSchema))
  .query(({ ctx, input }) => recentTasks(ctx.services.db, input.org_id));

/** A task of any organization with its steps, escalations and recording, its bytes on the console's routes (404 task_not_found). */
export const getTaskProcedure = operatorProcedure
  .input(z.object({ task_id: z.string().max(200) }))
  .output(OperatorTaskViewSchema)
  .query(({ ctx, input }) => operatorTaskView(ctx.services.db, consoleTaskArtifactUrls, input.task_id));
