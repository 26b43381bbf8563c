import { CreatedApiKeySchema } from '../../domain/orgs/operator-admin-results';
import { createApiKey } from '../../domain/orgs/operator-admin';
import { operatorProcedure } from '../console-procedures';
import { NewApiKeyInputSchema } from './api-key-schemas';

/** Mints a key as `key:create` does; the whole key is in this answer only. */
export const createApiKeyProcedure = operatorProcedure
  .input(NewApiKeyInputSchema)
  .output(CreatedApiKeySchema)
  .mutation(({ ctx, input }) => createApiKey(ctx.services.db, { orgId: input.org_id, scopes: input.scopes, spaceIds: input.space_ids, env: input.env }, ctx.auditOrigin));
