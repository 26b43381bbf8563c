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
