import { RevokedApiKeySchema } from '../../domain/orgs/operator-admin-results';
import { revokeApiKey } from '../../domain/orgs/operator-admin';
import { operatorProcedure } from '../console-procedures';
import { RevokeApiKeyInputSchema } from './api-key-schemas';

/** Revokes a key as `key:revoke` does: on every instance within 1 s, with the sessions and streams it opened. */
export const revokeApiKeyProcedure = operatorProcedure
  .input(RevokeApiKeyInputSchema)
  .output(RevokedApiKeySchema)
  .mutation(({ ctx, input }) => revokeApiKey(ctx.services.db, input.key_id, { publicUrl: ctx.services.config.http.publicUrl, origin: ctx.auditOrigin }));
