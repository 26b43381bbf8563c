import { z } from 'zod';
import { RevokedApiKeySchema } from '../../domain/orgs/operator-admin-results';
import { revokeApiKey } from '../../domain/orgs/operator-admin';
import { operatorProcedure } from '../console-procedures';

/** Revokes a key as `key:revoke` does: on every instance within 1 s, with the sessions and streams it opened. */
export const revokeApiKeyProcedure = operatorProcedure
  .input(z.object({ key_id: z.string().max(50) }))
  .output(RevokedApiKeySchema)
  .mutation(({ ctx, input }) => revokeApiKey(ctx.services.db, input.key_id, { publicUrl: ctx.services.config.http.publicUrl, origin: ctx.auditOrigin }));
