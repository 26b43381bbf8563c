import { UpdatedOrganizationSchema } from '../../domain/orgs/operator-admin-results';
import { updateOrganizationSettings } from '../../domain/orgs/operator-admin';
import { operatorProcedure } from '../console-procedures';
import { OrganizationSettingsInputSchema } from './organization-schemas';

/** Changes an organization's quotas and escalation URL as `org:update` does; a first escalation URL's signing secret is in this answer only. */
export const updateOrganizationProcedure = operatorProcedure
  .input(OrganizationSettingsInputSchema)
  .output(UpdatedOrganizationSchema)
  .mutation(({ ctx, input }) =>
    updateOrganizationSettings(
      ctx.services.db,
      input.org_id,
      { maxDevices: input.max_devices, maxDeviceSeconds: input.max_device_seconds, escalationUrl: input.escalation_url },
      { allowPrivateDestinations: ctx.services.config.webhooks.allowPrivateDestinations, origin: ctx.auditOrigin },
    ),
  );
