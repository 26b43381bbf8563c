import { OrganizationViewSchema } from '../../domain/console/operator-view-schemas';
import { getOrganizationView } from '../../domain/console/operator-views';
import { operatorProcedure } from '../console-procedures';
import { OrganizationInputSchema } from '../console-fields';

/** One organization with its Spaces, quotas and escalation URL (404 organization_not_found). */
export const getOrganizationProcedure = operatorProcedure
  .input(OrganizationInputSchema)
  .output(OrganizationViewSchema)
  .query(({ ctx, input }) => getOrganizationView(ctx.services.db, input.org_id));
