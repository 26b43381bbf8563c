import { z } from 'zod';
import { EscalationSchema } from '../escalations/escalation-resource';

// What the console shows operators (operator-views.ts), as its procedures declare it.

/** An organization of the preview with its Spaces; never its escalation signing secret. */
export const OrganizationViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  entitled: z.boolean(),
  max_devices: z.number().int().nullable(),
  max_device_seconds: z.number().int().nullable(),
  escalation_url: z.string().nullable(),
  created_at: z.string(),
  spaces: z.array(z.object({ id: z.string(), name: z.string() })),
});
export type OrganizationView = z.infer<typeof OrganizationViewSchema>;

/** An API key as listed; never its secret or the secret's hash. */
export const ApiKeyViewSchema = z.object({
  key_id: z.string(),
  env: z.enum(['live', 'test']),
  scopes: z.array(z.string()),
  space_ids: z.array(z.string()),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
});
export type ApiKeyView = z.infer<typeof ApiKeyViewSchema>;

/** A pending escalation on the operators' queue, with its organization's name. */
export const PendingEscalationSchema = EscalationSchema.extend({ organization: z.string() });
export type PendingEscalation = z.infer<typeof PendingEscalationSchema>;
