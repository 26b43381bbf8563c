import { getUsage, UsageQuerySchema, UsageSchema } from '../domain/usage/usage';
import { scoped } from '../trpc/procedures';

export const getUsageProcedure = scoped('operator:usage:read')
  .meta({ openapi: { method: 'GET', path: '/usage', tags: ['usage'], summary: "The organization's usage over the rolling 24 hours" } })
  .input(UsageQuerySchema)
  .output(UsageSchema)
  .query(({ ctx, input }) => getUsage(ctx.services.db, ctx.services.config.prices, ctx.principal, input));
