import { z } from 'zod';
import { OperatorTaskSchema } from '../../domain/console/operator-view-schemas';
import { recentTasks } from '../../domain/console/organization-activity';
import { operatorProcedure } from '../console-procedures';
import { RecentTasksInputSchema } from './task-schemas';

/** The organization's latest 20 tasks, newest first. */
export const listRecentTasksProcedure = operatorProcedure
  .input(RecentTasksInputSchema)
  .output(z.array(OperatorTaskSchema))
  .query(({ ctx, input }) => recentTasks(ctx.services.db, input.org_id));
