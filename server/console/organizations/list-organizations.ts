import { OrganizationPageSchema, OrganizationSearchSchema } from '../../domain/console/operator-view-schemas';
import { searchOrganizations } from '../../domain/console/organization-search';
import { operatorProcedure } from '../console-procedures';

/** A page of the preview's organizations, newest first, searched by name or id. */
export const listOrganizationsProcedure = operatorProcedure
  .input(OrganizationSearchSchema)
  .output(OrganizationPageSchema)
  .query(({ ctx, input }) => searchOrganizations(ctx.services.db, input));
