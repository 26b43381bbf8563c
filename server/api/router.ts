import { router } from '../trpc/init';
import { listAuditEventsProcedure } from './audit/list-audit-events';
import { getWhoami } from './whoami/get-whoami';

// One entry per REST route; each procedure file declares its own method and path.
export const appRouter = router({
  whoami: getWhoami,
  listAuditEvents: listAuditEventsProcedure,
});

export type AppRouter = typeof appRouter;
