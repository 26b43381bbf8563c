import { CreatedOrganizationSchema } from '../../domain/orgs/operator-admin-results';
import { createCheckedOrganization } from '../../domain/orgs/operator-admin';
import { operatorProcedure } from '../console-procedures';
import { NewOrganizationInputSchema } from './organization-schemas';

/** Creates an organization as `org:create` does; its escalation signing secret is in this answer only. */
export const createOrganizationProcedure = operatorProcedure
  .input(NewOrganizationInputSchema)
  .output(CreatedOrganizationSchema)
  .mutation(({ ctx, input }) =>
    createCheckedOrganization(
      ctx.services.db,
      { name: input.name, entitled: input.entitled, maxDevices: input.max_devices, maxDeviceSeconds: input.max_device_seconds, escalationUrl: input.escalation_url },
      { allowPrivateDestinations: ctx.services.config.webhooks.allowPrivateDestinations, origin: ctx.auditOrigin },
    ),
  );
