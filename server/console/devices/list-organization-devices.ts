import { z } from 'zod';
import { OperatorDeviceSchema } from '../../domain/console/operator-view-schemas';
import { organizationDevices } from '../../domain/console/organization-activity';
import { operatorProcedure } from '../console-procedures';
import { OrganizationDevicesInputSchema } from './device-schemas';

/** The organization's devices that are not terminated, newest first (at most 100), with their current task. */
export const listOrganizationDevicesProcedure = operatorProcedure
  .input(OrganizationDevicesInputSchema)
  .output(z.array(OperatorDeviceSchema))
  .query(({ ctx, input }) => organizationDevices(ctx.services.db, input.org_id));
