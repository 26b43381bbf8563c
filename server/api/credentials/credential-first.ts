import { z } from 'zod';
import { ApiError } from '../../core/errors';
import { loadCredentialForCaller } from '../../domain/credentials/credential-resource';
import type { Scope } from '../../domain/keys/scopes';
import { writeGated } from '../../trpc/procedures';

const PathIdSchema = z.object({ id: z.string() });

/**
 * The write gate, then the `{id}` credential found (404 credential_not_found, 403 for a
 * Space the key lacks) before the body is validated, as for a task's device
 * (tasks/device-first.ts): another organization's id answers 404 whatever the body holds.
 */
export function writeGatedOnCredential(scope: Scope) {
  return writeGated(scope).use(async ({ ctx, getRawInput, next }) => {
    const raw = PathIdSchema.safeParse(await getRawInput());
    if (!raw.success) throw new ApiError('credential_not_found');
    await loadCredentialForCaller(ctx.services.db, ctx.principal, raw.data.id);
    return next();
  });
}
