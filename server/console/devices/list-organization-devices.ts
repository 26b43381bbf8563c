import { z } from 'zod';
import { OperatorDeviceSchema } from '../../domain/console/operator-view-schemas';
import { organizationDevices } from '../../domain/console/organization-activity';
import { operatorProcedure } from '../console-procedures';
import { OrganizationInputSchema } from '../console-fields';

/** The organization's devices that are not terminated, newest first (at most 100), with their current task. */
export const listOrganizationDevicesProcedure = operatorProcedure
  .input(OrganizationInputSchema)
  .output(z.array(OperatorDeviceSchema))
  .query(({ ctx, input }) => organizationDevices(ctx.services.db, input.org_id));
