import { z } from 'zod';
import { scopes } from '../keys/scopes';

// What the operators' changes (operator-admin.ts) answer with: the admin CLI prints these
// as its JSON, and the console's procedures declare them as their output.

/** The new organization's id, and with an escalation URL its signing secret, shown this once. */
export const CreatedOrganizationSchema = z.object({ org_id: z.string(), escalation_signing_secret: z.string().optional() });
export type CreatedOrganization = z.infer<typeof CreatedOrganizationSchema>;

/** A rotated escalation signing secret, shown this once. */
export const RotatedEscalationSecretSchema = z.object({ org_id: z.string(), escalation_signing_secret: z.string() });
export type RotatedEscalationSecret = z.infer<typeof RotatedEscalationSecretSchema>;

export const CreatedSpaceSchema = z.object({ space_id: z.string() });
export type CreatedSpace = z.infer<typeof CreatedSpaceSchema>;

/** A new API key, whole only in this answer; the service keeps the secret's hash. */
export const CreatedApiKeySchema = z.object({ key: z.string(), key_id: z.string(), scopes: z.array(z.enum(scopes)), space_ids: z.array(z.string()) });
export type CreatedApiKey = z.infer<typeof CreatedApiKeySchema>;

export const RevokedApiKeySchema = z.object({ revoked: z.literal(true) });
export type RevokedApiKey = z.infer<typeof RevokedApiKeySchema>;

/** An organization's changed settings; its signing secret only when this change gave it its first escalation URL. */
export const UpdatedOrganizationSchema = z.object({ org_id: z.string(), escalation_signing_secret: z.string().optional() });
export type UpdatedOrganization = z.infer<typeof UpdatedOrganizationSchema>;
