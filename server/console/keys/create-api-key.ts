import { z } from 'zod';
import { isScope } from '../../domain/keys/scopes';
import { CreatedApiKeySchema } from '../../domain/orgs/operator-admin-results';
import { createApiKey } from '../../domain/orgs/operator-admin';
import { operatorProcedure } from '../console-procedures';
import { OrgIdSchema } from '../console-fields';

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
