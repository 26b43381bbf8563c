import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import type { DbOrTx } from '../../../db/client';
import { credentials } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { parsePublicId, toPublicId } from '../ids';
import type { Principal } from '../keys/principal';
import { assertSpaceAccess } from '../spaces/space-access';
import { iso, isoOrNull } from '../time';

/** The credential resource exactly as every route returns it: what it holds, never a value. */
export const CredentialSchema = z.object({
  id: z.string(),
  object: z.literal('credential'),
  name: z.string(),
  space_id: z.string(),
  domains: z.array(z.string()),
  username: z.string().nullable(),
  has_password: z.boolean(),
  has_totp: z.boolean(),
  has_notes: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
  last_used_at: z.string().nullable(),
});
export type Credential = z.infer<typeof CredentialSchema>;

export type CredentialRow = typeof credentials.$inferSelect;

export function toCredentialResource(row: CredentialRow): Credential {
  return {
    id: toPublicId('credential', row.id),
    object: 'credential',
    name: row.name,
    space_id: row.spaceId,
    domains: row.domains,
    username: row.username,
    has_password: row.passwordSealed !== null,
    has_totp: row.totpSealed !== null,
    has_notes: row.notesSealed !== null,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    last_used_at: isoOrNull(row.lastUsedAt),
  };
}

/**
 * The caller's credential by public id. Malformed, absent (deleted included) and other
 * organizations' ids are the same 404; one in a Space the key does not hold is 403.
 */
export async function loadCredentialForCaller(
  db: DbOrTx,
  principal: Principal,
  publicId: string,
  options: { forUpdate?: boolean } = {},
): Promise<CredentialRow> {
  const id = parsePublicId('credential', publicId);
  if (id === null) throw new ApiError('credential_not_found');
  const query = db
    .select()
    .from(credentials)
    .where(and(eq(credentials.id, id), eq(credentials.orgId, principal.orgId)));
  const [row] = options.forUpdate === true ? await query.for('update') : await query;
  if (row === undefined) throw new ApiError('credential_not_found');
  assertSpaceAccess(principal, row.spaceId);
  return row;
}

/** The additional authenticated data of a sealed field: the row and the field it belongs to. */
export function sealContext(credentialId: string, field: 'password' | 'totp' | 'notes' | 'code'): string {
  return `credential:${credentialId}:${field}`;
}
