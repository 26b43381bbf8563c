import { z } from 'zod';
import { deviceForOperator, OperatorDeviceViewSchema } from '../domain/console/operator-live';
import { OperatorDeviceSchema } from '../domain/console/operator-view-schemas';
import { organizationDevices } from '../domain/console/organization-activity';
import { OrganizationInputSchema } from './console-fields';
import { operatorProcedure } from './console-procedures';

// Devices of any organization, as the operator sees them.

/** The organization's devices that are not terminated, newest first (at most 100), with their current task. */
export const listOrganizationDevicesProcedure = operatorProcedure
  .input(OrganizationInputSchema)
  .output(z.array(OperatorDeviceSchema))
  .query(({ ctx, input }) => organizationDevices(ctx.services.db, input.org_id));

/** One device of any organization: status, current task, the escalation it waits on, whether it is held (404 device_not_found). */
export const getDeviceProcedure = operatorProcedure
  .input(z.object({ id: z.string().max(200) }))
  .output(OperatorDeviceViewSchema)
  .query(({ ctx, input }) => deviceForOperator(ctx.services.db, input.id));
