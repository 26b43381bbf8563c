import { z } from 'zod';
import { DisplayNameSchema, OrgIdSchema } from '../console-fields';

/** A new organization as the console's form sends it; an empty escalation URL is none. */
export const NewOrganizationInputSchema = z.object({
  name: DisplayNameSchema,
  entitled: z.boolean(),
  max_devices: z.number().int().min(0).max(1_000_000).nullable(),
  max_device_seconds: z.number().int().min(0).max(2 ** 31 - 1).nullable(),
  escalation_url: z.string().trim().max(2048).nullable().transform((url) => (url === '' ? null : url)),
});

export const OrganizationInputSchema = z.object({ org_id: OrgIdSchema });

const QuotaSchema = z.number().int().min(0).max(2 ** 31 - 1).nullable();

/** An organization's settings as the console's form sends them all; an empty escalation URL is none. */
export const OrganizationSettingsInputSchema = z.object({
  org_id: OrgIdSchema,
  max_devices: QuotaSchema,
  max_device_seconds: QuotaSchema,
  escalation_url: z.string().trim().max(2048).nullable().transform((url) => (url === '' ? null : url)),
});
