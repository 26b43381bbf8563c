import { z } from 'zod';
import { ApiError } from '../../core/errors';
import { loadDeviceForCaller } from '../../domain/devices/load-device';
import type { Scope } from '../../domain/keys/scopes';
import { writeGated } from '../../trpc/procedures';

const PathIdSchema = z.object({ id: z.string() });

/**
 * The write gate, then the `{id}` device resolved (404 device_not_found, 403 for a Space
 * the key lacks) before the body is validated: the spec orders the device check right
 * after the write gate, so another organization's device id answers 404 whatever the body
 * holds. tRPC parses the input where `.input()` is chained, after this middleware. The
 * device goes on in the context (`ctx.device`), so the route does not load it again.
 */
export function writeGatedOnDevice(scope: Scope) {
  return writeGated(scope).use(async ({ ctx, getRawInput, next }) => {
    const raw = PathIdSchema.safeParse(await getRawInput());
    if (!raw.success) throw new ApiError('device_not_found');
    const device = await loadDeviceForCaller(ctx.services.db, ctx.principal, raw.data.id);
    return next({ ctx: { device } });
  });
}
