import { z } from 'zod';
import { isScope, scopes } from '../../domain/keys/scopes';
import { OrgIdSchema } from '../console-fields';

export const ScopeListSchema = z.array(z.enum(scopes));

export const OrganizationKeysInputSchema = z.object({ org_id: OrgIdSchema });

/** A new key: its scopes, the Spaces it holds (none: organization-wide), its environment. */
export const NewApiKeyInputSchema = z.object({
  org_id: OrgIdSchema,
  scopes: z.array(z.string().refine(isScope, 'unknown scope')).min(1).max(20),
  space_ids: z.array(z.uuid()).max(50),
  env: z.enum(['live', 'test']),
});

export const RevokeApiKeyInputSchema = z.object({ key_id: z.string().max(50) });
