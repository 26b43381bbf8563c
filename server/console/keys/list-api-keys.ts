import { z } from 'zod';
import { ApiKeyViewSchema } from '../../domain/console/operator-view-schemas';
import { listApiKeys } from '../../domain/console/operator-views';
import { operatorProcedure } from '../console-procedures';
import { OrganizationInputSchema } from '../console-fields';

/** An organization's keys, newest first, revoked ones included; never a secret. */
export const listApiKeysProcedure = operatorProcedure
  .input(OrganizationInputSchema)
  .output(z.array(ApiKeyViewSchema))
  .query(({ ctx, input }) => listApiKeys(ctx.services.db, input.org_id));
