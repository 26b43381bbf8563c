import { z } from 'zod';
import { OrganizationPageSchema, OrganizationSearchSchema, OrganizationViewSchema } from '../domain/console/operator-view-schemas';
import { getOrganizationView } from '../domain/console/operator-views';
import { searchOrganizations } from '../domain/console/organization-search';
import { createCheckedOrganization, rotateEscalationSigningSecret, updateOrganizationSettings } from '../domain/orgs/operator-admin';
import { CreatedOrganizationSchema, RotatedEscalationSecretSchema, UpdatedOrganizationSchema } from '../domain/orgs/operator-admin-results';
import { hourlyUsage, HourlyUsageSchema } from '../domain/usage/hourly-usage';
import { DisplayNameSchema, EscalationUrlSchema, OrganizationInputSchema, OrgIdSchema } from './console-fields';
import { operatorProcedure } from './console-procedures';

// The preview's organizations: search, one, create, update, usage, the escalation signing secret.

/** A page of the preview's organizations, newest first, searched by name or id. */
export const listOrganizationsProcedure = operatorProcedure
  .input(OrganizationSearchSchema)
  .output(OrganizationPageSchema)
  .query(({ ctx, input }) => searchOrganizations(ctx.services.db, input));

/** One organization with its Spaces, quotas and escalation URL (404 organization_not_found). */
export const getOrganizationProcedure = operatorProcedure
  .input(OrganizationInputSchema)
  .output(OrganizationViewSchema)
  .query(({ ctx, input }) => getOrganizationView(ctx.services.db, input.org_id));

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

/** The organization's device time, tasks and steps hour by hour over the last 24 h. */
export const organizationUsageProcedure = operatorProcedure
  .input(OrganizationInputSchema)
  .output(HourlyUsageSchema)
  .query(({ ctx, input }) => hourlyUsage(ctx.services.db, input.org_id));

/** A new escalation signing secret for the organization, in this answer only (409 no_escalation_url without an escalation URL). */
export const rotateEscalationSecretProcedure = operatorProcedure
  .input(OrganizationInputSchema)
  .output(RotatedEscalationSecretSchema)
  .mutation(({ ctx, input }) => rotateEscalationSigningSecret(ctx.services.db, input.org_id, ctx.auditOrigin));
