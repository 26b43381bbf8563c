import { CreatedSpaceSchema } from '../../domain/orgs/operator-admin-results';
import { createSpace } from '../../domain/orgs/operator-admin';
import { operatorProcedure } from '../console-procedures';
import { NewSpaceInputSchema } from './space-schemas';

/** Adds a Space to an organization, as `space:create` does. */
export const createSpaceProcedure = operatorProcedure
  .input(NewSpaceInputSchema)
  .output(CreatedSpaceSchema)
  .mutation(({ ctx, input }) => createSpace(ctx.services.db, input.org_id, input.name, ctx.auditOrigin));
