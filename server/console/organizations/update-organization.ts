import { z } from 'zod';
import { UpdatedOrganizationSchema } from '../../domain/orgs/operator-admin-results';
import { updateOrganizationSettings } from '../../domain/orgs/operator-admin';
import { operatorProcedure } from '../console-procedures';
import { EscalationUrlSchema, OrgIdSchema } from '../console-fields';

/** Changes an organization's quotas and escalation URL as `org:update` does; a first escalation URL's signing secret is in this answer only. */
export const updateOrganizationProcedure = operatorProcedure
  // Its settings as the console's form sends them all.
  .input(
    z.object({
      org_id: OrgIdSchema,
      max_devices: z.number().int().min(0).max(2 ** 31 - 1).nullable(),
      max_device_seconds: z.number().int().min(0).max(2 ** 31 - 1).nullable(),
      escalation_url: EscalationUrlSchema,
    }),
  )
  .output(UpdatedOrganizationSchema)
  .mutation(({ ctx, input }) =>
    updateOrganizationSettings(
      ctx.services.db,
      input.org_id,
      { maxDevices: input.max_devices, maxDeviceSeconds: input.max_device_seconds, escalationUrl: input.escalation_url },
      { allowPrivateDestinations: ctx.services.config.webhooks.allowPrivateDestinations, origin: ctx.auditOrigin },
    ),
  );
