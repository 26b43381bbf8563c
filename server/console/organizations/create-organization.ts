import { z } from 'zod';
import { CreatedOrganizationSchema } from '../../domain/orgs/operator-admin-results';
import { createCheckedOrganization } from '../../domain/orgs/operator-admin';
import { operatorProcedure } from '../console-procedures';
import { DisplayNameSchema, EscalationUrlSchema } from '../console-fields';

/** Creates an organization as `org:create` does; its escalation signing secret is in this answer only. */
export const createOrganizationProcedure = operatorProcedure
  // As the console's form sends it.
  .input(
    z.object({
      name: DisplayNameSchema,
      entitled: z.boolean(),
      max_devices: z.number().int().min(0).max(1_000_000).nullable(),
      max_device_seconds: z.number().int().min(0).max(2 ** 31 - 1).nullable(),
      escalation_url: EscalationUrlSchema,
    }),
  )
  .output(CreatedOrganizationSchema)
  .mutation(({ ctx, input }) =>
    createCheckedOrganization(
      ctx.services.db,
      { name: input.name, entitled: input.entitled, maxDevices: input.max_devices, maxDeviceSeconds: input.max_device_seconds, escalationUrl: input.escalation_url },
      { allowPrivateDestinations: ctx.services.config.webhooks.allowPrivateDestinations, origin: ctx.auditOrigin },
    ),
  );
