import { z } from 'zod';
import { CreatedSpaceSchema } from '../domain/orgs/operator-admin-results';
import { createSpace } from '../domain/orgs/operator-admin';
import { operatorProcedure } from './console-procedures';
import { DisplayNameSchema, OrgIdSchema } from './console-fields';

/** Adds a Space to an organization, as `space:create` does. */
export const createSpaceProcedure = operatorProcedure
  .input(z.object({ org_id: OrgIdSchema, name: DisplayNameSchema }))
  .output(CreatedSpaceSchema)
  .mutation(({ ctx, input }) => createSpace(ctx.services.db, input.org_id, input.name, ctx.auditOrigin));
