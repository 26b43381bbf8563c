import { deleteExpiredIdempotencyKeys } from '../domain/idempotency/with-idempotency';
import type { Services } from '../services';
import { periodicWorker, type Worker } from './worker';

export function idempotencySweep(services: Services): Worker {
  return periodicWorker(
    'idempotency-sweep',
    60_000,
    () => deleteExpiredIdempotencyKeys(services.db),
    (error) => services.log.error({ err: error }, 'idempotency sweep failed'),
  );
}
