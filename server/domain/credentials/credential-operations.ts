import { randomUUID } from 'node:crypto';
import { and, desc, eq, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { Db } from '../../../db/client';
import { credentials } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { recordAudit } from '../audit/record-audit';
import { toPublicId } from '../ids';
import type { Actor, Principal } from '../keys/principal';
import { olderThan, PageQuerySchema, type CursorCodec, type Page } from '../pagination/cursor';
import { resolveRequestedSpace } from '../spaces/resolve-space';
import { listSpace } from '../spaces/space-access';
import { isUniqueViolation } from '../unique-violation';
import { loadCredentialForCaller, sealContext, toCredentialResource, type Credential, type CredentialRow } from './credential-resource';
import { normalizeRegistrableDomain } from './registrable-domain';
import type { SecretBox } from './secret-box';
import { parseTotp } from './totp';

export interface CredentialDeps {
  db: Db;
  secrets: SecretBox;
}

export const CREDENTIAL_NAME_PATTERN = /^[a-z0-9_-]{1,64}$/;
export const MAX_CREDENTIAL_DOMAINS = 20;

const NameSchema = z.string().regex(CREDENTIAL_NAME_PATTERN, 'name must be 1-64 characters of a-z, 0-9, _ and -');
const DomainsSchema = z.array(z.string().max(253)).min(1).max(MAX_CREDENTIAL_DOMAINS);
const UsernameSchema = z.string().min(1).max(256);
const PasswordSchema = z.string().min(1).max(1024);
const TotpSecretSchema = z.string().min(1).max(2048);
const NotesSchema = z.string().max(4096);
const TotpAlgorithmSchema = z.enum(['SHA1', 'SHA256', 'SHA512']);
const TotpDigitsSchema = z.number().int();
const TotpPeriodSchema = z.number().int();

export const CreateCredentialBodySchema = z.strictObject({
  name: NameSchema,
  /** Raw uuid; omitted: the key's one Space (as for devices). */
  space_id: z.string().max(100).optional(),
  domains: DomainsSchema,
  username: UsernameSchema.optional(),
  password: PasswordSchema.optional(),
  /** A base32 secret or an otpauth://totp/ URI. */
  totp_secret: TotpSecretSchema.optional(),
  totp_algorithm: TotpAlgorithmSchema.optional(),
  totp_digits: TotpDigitsSchema.optional(),
  totp_period: TotpPeriodSchema.optional(),
  notes: NotesSchema.optional(),
});
export type CreateCredentialBody = z.infer<typeof CreateCredentialBodySchema>;

/** PATCH: a field given replaces the stored one, null removes it, an omitted field stays. */
export const UpdateCredentialInputSchema = z.strictObject({
  id: z.string().max(200),
  name: NameSchema.optional(),
  domains: DomainsSchema.optional(),
  username: UsernameSchema.nullable().optional(),
  password: PasswordSchema.nullable().optional(),
  totp_secret: TotpSecretSchema.nullable().optional(),
  totp_algorithm: TotpAlgorithmSchema.optional(),
  totp_digits: TotpDigitsSchema.optional(),
  totp_period: TotpPeriodSchema.optional(),
  notes: NotesSchema.nullable().optional(),
});
export type UpdateCredentialInput = z.infer<typeof UpdateCredentialInputSchema>;

export const ListCredentialsQuerySchema = PageQuerySchema.extend({ space_id: z.uuid().optional() }).strict();
export type ListCredentialsQuery = z.infer<typeof ListCredentialsQuerySchema>;

type SecretFields = Pick<CreateCredentialBody, 'totp_algorithm' | 'totp_digits' | 'totp_period'> & { totp_secret?: string | null };

/** Each domain a registrable domain, duplicates dropped; else 400 on `domains`. */
function checkDomains(domains: readonly string[]): string[] {
  const normalized = domains.map(normalizeRegistrableDomain);
  if (normalized.some((domain) => domain === null)) {
    throw new ApiError('invalid_request', { param: 'domains', message: 'Each domain must be a registrable domain such as example.com (no scheme, port, path or subdomain).' });
  }
  return [...new Set(normalized as string[])];
}

/** The sealed TOTP document of a request's totp_* fields: undefined when absent, null to remove. */
function sealedTotp(box: SecretBox, credentialId: string, fields: SecretFields): string | null | undefined {
  const tuning = fields.totp_algorithm !== undefined || fields.totp_digits !== undefined || fields.totp_period !== undefined;
  if (fields.totp_secret === undefined || fields.totp_secret === null) {
    if (tuning) {
      const param = fields.totp_algorithm !== undefined ? 'totp_algorithm' : fields.totp_digits !== undefined ? 'totp_digits' : 'totp_period';
      throw new ApiError('invalid_request', { param, message: 'The totp_algorithm, totp_digits and totp_period fields are given with a totp_secret.' });
    }
    return fields.totp_secret;
  }
  const parsed = parseTotp({ secret: fields.totp_secret, algorithm: fields.totp_algorithm, digits: fields.totp_digits, period: fields.totp_period });
  if ('param' in parsed) throw new ApiError('invalid_request', { param: parsed.param, message: parsed.message });
  return box.seal(JSON.stringify(parsed), sealContext(credentialId, 'totp'));
}

function sealedOrNull(box: SecretBox, credentialId: string, field: 'password' | 'notes', value: string | null | undefined): string | null | undefined {
  return value === undefined || value === null ? value : box.seal(value, sealContext(credentialId, field));
}

function nameTaken(error: unknown): never {
  if (isUniqueViolation(error)) throw new ApiError('credential_name_taken', { param: 'name' });
  throw error;
}

/** Which fields a request set, by name only: audit details never hold a value. */
function changedFields(input: object): string[] {
  return Object.entries(input)
    .filter(([field, value]) => field !== 'id' && value !== undefined)
    .map(([field]) => field);
}

/** POST /v1/credentials: the secrets are sealed before anything is written. */
export async function createCredential(deps: CredentialDeps, principal: Principal, actor: Actor, body: CreateCredentialBody): Promise<Credential> {
  const domains = checkDomains(body.domains);
  // The id is chosen here: it is part of each sealed value's authenticated context.
  const id = randomUUID();
  const totpSealed = sealedTotp(deps.secrets, id, body) ?? null;
  const spaceId = await resolveCredentialSpace(deps.db, principal, body.space_id);
  const row = await deps.db
    .transaction(async (tx) => {
      const [inserted] = await tx
        .insert(credentials)
        .values({
          id,
          orgId: principal.orgId,
          spaceId,
          name: body.name,
          domains,
          username: body.username ?? null,
          passwordSealed: sealedOrNull(deps.secrets, id, 'password', body.password) ?? null,
          totpSealed,
          notesSealed: sealedOrNull(deps.secrets, id, 'notes', body.notes) ?? null,
        })
        .returning();
      await recordAudit(tx, actor, {
        action: 'operator.credential.created',
        resourceType: 'credential',
        resourceId: toPublicId('credential', id),
        spaceId,
        details: { name: body.name, domains, fields: changedFields(body).filter((field) => field !== 'name' && field !== 'domains' && field !== 'space_id') },
      });
      return inserted!;
    })
    .catch(nameTaken);
  return toCredentialResource(row);
}

/** The Space of a new credential: the rules of a new device's (a key of one Space may omit it). */
async function resolveCredentialSpace(db: Db, principal: Principal, requested: string | undefined): Promise<string> {
  if (requested === undefined) {
    if (principal.spaceIds.length === 1) return principal.spaceIds[0]!;
    throw new ApiError('invalid_request', { param: 'space_id', message: 'space_id is required unless the key holds exactly one Space.' });
  }
  return resolveRequestedSpace(db, principal, requested);
}

/** GET /v1/credentials: newest first; a Space-scoped key must name a Space it holds. */
export async function listCredentials(db: Db, cursors: CursorCodec, principal: Principal, query: ListCredentialsQuery): Promise<Page<Credential>> {
  const spaceId = listSpace(principal, query.space_id);
  const list = `credentials:${principal.orgId}:${spaceId ?? '*'}`;
  const position = query.cursor === undefined ? null : cursors.decode(list, query.cursor);
  const conditions: (SQL | undefined)[] = [
    eq(credentials.orgId, principal.orgId),
    spaceId === null ? undefined : eq(credentials.spaceId, spaceId),
    olderThan(credentials.createdAt, credentials.id, position),
  ];
  const rows = await db
    .select()
    .from(credentials)
    .where(and(...conditions))
    .orderBy(desc(credentials.createdAt), desc(credentials.id))
    .limit(query.limit + 1);
  return cursors.page(list, rows, query.limit, toCredentialResource);
}

export async function getCredential(db: Db, principal: Principal, publicId: string): Promise<Credential> {
  return toCredentialResource(await loadCredentialForCaller(db, principal, publicId));
}

/** PATCH /v1/credentials/{id}: replacing a password or TOTP secret is how a credential is rotated. */
export async function updateCredential(deps: CredentialDeps, principal: Principal, actor: Actor, input: UpdateCredentialInput): Promise<Credential> {
  const domains = input.domains === undefined ? undefined : checkDomains(input.domains);
  const row = await deps.db
    .transaction(async (tx) => {
      const current = await loadCredentialForCaller(tx, principal, input.id, { forUpdate: true });
      const changes: Partial<CredentialRow> = { updatedAt: new Date() };
      if (input.name !== undefined) changes.name = input.name;
      if (domains !== undefined) changes.domains = domains;
      if (input.username !== undefined) changes.username = input.username;
      const password = sealedOrNull(deps.secrets, current.id, 'password', input.password);
      if (password !== undefined) changes.passwordSealed = password;
      const totp = sealedTotp(deps.secrets, current.id, input);
      if (totp !== undefined) changes.totpSealed = totp;
      const notes = sealedOrNull(deps.secrets, current.id, 'notes', input.notes);
      if (notes !== undefined) changes.notesSealed = notes;
      const [updated] = await tx.update(credentials).set(changes).where(eq(credentials.id, current.id)).returning();
      await recordAudit(tx, actor, {
        action: 'operator.credential.updated',
        resourceType: 'credential',
        resourceId: toPublicId('credential', current.id),
        spaceId: current.spaceId,
        details: { name: updated!.name, changed: changedFields(input), ...(domains === undefined ? {} : { domains }) },
      });
      return updated!;
    })
    .catch(nameTaken);
  return toCredentialResource(row);
}

/** DELETE /v1/credentials/{id}: gone with its pushed codes; a second delete is 404. */
export async function deleteCredential(db: Db, principal: Principal, actor: Actor, publicId: string): Promise<void> {
  await db.transaction(async (tx) => {
    const current = await loadCredentialForCaller(tx, principal, publicId, { forUpdate: true });
    await tx.delete(credentials).where(eq(credentials.id, current.id));
    await recordAudit(tx, actor, {
      action: 'operator.credential.deleted',
      resourceType: 'credential',
      resourceId: toPublicId('credential', current.id),
      spaceId: current.spaceId,
      details: { name: current.name },
    });
  });
}
