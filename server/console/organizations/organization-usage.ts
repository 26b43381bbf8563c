import { HourlyUsageSchema, hourlyUsage } from '../../domain/usage/hourly-usage';
import { operatorProcedure } from '../console-procedures';
import { OrganizationInputSchema } from '../console-fields';

/** The organization's device time, tasks and steps hour by hour over the last 24 h. */
export const organizationUsageProcedure = operatorProcedure
  .input(OrganizationInputSchema)
  .output(HourlyUsageSchema)
  .query(({ ctx, input }) => hourlyUsage(ctx.services.db, input.org_id));
