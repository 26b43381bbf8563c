import { z } from 'zod';
import { ApiKeyViewSchema } from '../domain/console/operator-view-schemas';
import { listApiKeys } from '../domain/console/operator-views';
import { isScope, scopes } from '../domain/keys/scopes';
import { createApiKey, revokeApiKey } from '../domain/orgs/operator-admin';
import { CreatedApiKeySchema, RevokedApiKeySchema } from '../domain/orgs/operator-admin-results';
import { OrganizationInputSchema, OrgIdSchema } from './console-fields';
import { operatorProcedure } from './console-procedures';

// An organization's API keys: the scopes a key may hold, list, mint, revoke.

/** Every scope a key may hold, for the new-key form. */
export const listScopesProcedure = operatorProcedure.output(z.array(z.enum(scopes))).query(() => [...scopes]);

/** An organization's keys, newest first, revoked ones included; never a secret. */
export const listApiKeysProcedure = operatorProcedure
  .input(OrganizationInputSchema)
  .output(z.array(ApiKeyViewSchema))
  .query(({ ctx, input }) => listApiKeys(ctx.services.db, input.org_id));

/** Mints a key as `key:create` does; the whole key is in this answer only. */
export const createApiKeyProcedure = operatorProcedure
  // Its scopes, the Spaces it holds (none: organization-wide), its environment.
  .input(
    z.object({
      org_id: OrgIdSchema,
      scopes: z.array(z.string().refine(isScope, 'unknown scope')).min(1).max(20),
      space_ids: z.array(z.uuid()).max(50),
      env: z.enum(['live', 'test']),
    }),
  )
  .output(CreatedApiKeySchema)
  .mutation(({ ctx, input }) => createApiKey(ctx.services.db, { orgId: input.org_id, scopes: input.scopes, spaceIds: input.space_ids, env: input.env }, ctx.auditOrigin));

/** Revokes a key as `key:revoke` does: on every instance within 1 s, with the sessions and streams it opened. */
export const revokeApiKeyProcedure = operatorProcedure
  .input(z.object({ key_id: z.string().max(50) }))
  .output(RevokedApiKeySchema)
  .mutation(({ ctx, input }) => revokeApiKey(ctx.services.db, input.key_id, { publicUrl: ctx.services.config.http.publicUrl, origin: ctx.auditOrigin }));
