import { deleteExpiredConsoleSessions } from '../domain/console/console-sessions';
import { pruneOutbox } from '../domain/events/outbox-retention';
import { pruneArtifacts } from '../domain/recordings/artifact-retention';
import { deleteExpiredIdempotencyKeys } from '../domain/idempotency/with-idempotency';
import { deleteExpiredOAuthTokens } from '../domain/mcp-oauth/token-retention';
import type { Services } from '../services/services';
import { periodicWorker, type Worker } from './worker';

/** Housekeeping of records past their retention: idempotency keys, the outbox, console sign-ins, expired MCP OAuth tokens, recordings, step screenshots and downloaded files. */
export function retentionSweep(services: Services): Worker {
  return periodicWorker(
    'retention-sweep',
    60_000,
    async () => {
      await deleteExpiredIdempotencyKeys(services.db);
      await pruneOutbox(services.db);
      await deleteExpiredConsoleSessions(services.db);
      await deleteExpiredOAuthTokens(services.db);
      await pruneArtifacts(services.db, services.store, services.config.artifacts.retentionMs);
    },
    services.databaseAvailability.reportingOthers((error) => services.log.error({ err: error }, 'retention sweep failed')),
  );
}
