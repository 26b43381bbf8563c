import { z } from 'zod';
import { OperatorTaskSchema } from '../../domain/console/operator-view-schemas';
import { recentTasks } from '../../domain/console/organization-activity';
import { operatorProcedure } from '../console-procedures';
import { OrganizationInputSchema } from '../console-fields';

/** The organization's latest 20 tasks, newest first. */
export const listRecentTasksProcedure = operatorProcedure
  .input(OrganizationInputSchema)
  .output(z.array(OperatorTaskSchema))
  .query(({ ctx, input }) => recentTasks(ctx.services.db, input.org_id));
