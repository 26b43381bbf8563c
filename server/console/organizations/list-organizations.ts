import { z } from 'zod';
import { OrganizationViewSchema } from '../../domain/console/operator-view-schemas';
import { listOrganizations } from '../../domain/console/operator-views';
import { operatorProcedure } from '../console-procedures';

/** Every organization of the preview, newest first, with its Spaces. */
export const listOrganizationsProcedure = operatorProcedure.output(z.array(OrganizationViewSchema)).query(({ ctx }) => listOrganizations(ctx.services.db));
