import { and, desc, eq, gt, isNull, lt, or, isNotNull, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Db } from '../../../db/client';
import { credentialCodes } from '../../../db/schema';
import { recordAudit } from '../audit/record-audit';
import { dbNow, dbNowPlus } from '../db-clock';
import { toPublicId } from '../ids';
import type { Actor, Principal } from '../keys/principal';
import { loadCredentialForCaller, sealContext } from './credential-resource';
import type { CredentialDeps } from './credential-operations';
import type { SecretBox } from './secret-box';

/** How long a pushed code may be used. */
export const PUSHED_CODE_TTL_MS = 5 * 60_000;
/** Codes a credential keeps waiting at once; a push beyond drops the oldest (a looping sender cannot fill the table). */
const MAX_WAITING_CODES = 10;

export const PushCodeInputSchema = z.strictObject({
  id: z.string().max(200),
  /** What the SMS or e-mail said: letters, digits and dashes. */
  code: z.string().regex(/^[A-Za-z0-9-]{1,32}$/, 'code must be 1-32 letters, digits or dashes'),
});
export type PushCodeInput = z.infer<typeof PushCodeInputSchema>;

export const PushedCodeSchema = z.object({
  object: z.literal('credential_code'),
  credential_id: z.string(),
  expires_at: z.string(),
});
export type PushedCode = z.infer<typeof PushedCodeSchema>;

/**
 * POST /v1/credentials/{id}/codes: a one-time code a system received for this credential
 * (an SMS, an e-mail), for the next fill of `{{vault:<name>.code}}` within 5 minutes.
 * The answer says when it expires, never the code.
 */
export async function pushCredentialCode(deps: CredentialDeps, principal: Principal, actor: Actor, input: PushCodeInput): Promise<PushedCode> {
  return deps.db.transaction(async (tx) => {
    const credential = await loadCredentialForCaller(tx, principal, input.id, { forUpdate: true });
    // Spent and expired codes have no further use: they go with the next push.
    await tx.delete(credentialCodes).where(and(eq(credentialCodes.credentialId, credential.id), or(isNotNull(credentialCodes.usedAt), lt(credentialCodes.expiresAt, dbNow()))));
    const [inserted] = await tx
      .insert(credentialCodes)
      .values({ credentialId: credential.id, codeSealed: deps.secrets.seal(input.code, sealContext(credential.id, 'code')), expiresAt: dbNowPlus(PUSHED_CODE_TTL_MS) })
      .returning();
    await tx.execute(sql`
      delete from credential_codes where id in (
        select id from credential_codes where credential_id = ${credential.id}
        order by created_at desc offset ${MAX_WAITING_CODES})`);
    await recordAudit(tx, actor, {
      action: 'operator.credential.code_pushed',
      resourceType: 'credential',
      resourceId: toPublicId('credential', credential.id),
      spaceId: credential.spaceId,
      details: { name: credential.name },
    });
    return { object: 'credential_code', credential_id: toPublicId('credential', credential.id), expires_at: inserted!.expiresAt.toISOString() };
  });
}

/**
 * Takes the freshest unused, unexpired code of a credential, marking it used in the same
 * statement (two tasks never both take one); null when none waits.
 */
export async function takeFreshestCode(db: Db, secrets: SecretBox, credentialId: string): Promise<string | null> {
  return db.transaction(async (tx) => {
    const [fresh] = await tx
      .select()
      .from(credentialCodes)
      .where(and(eq(credentialCodes.credentialId, credentialId), isNull(credentialCodes.usedAt), gt(credentialCodes.expiresAt, dbNow())))
      .orderBy(desc(credentialCodes.createdAt))
      .limit(1)
      .for('update', { skipLocked: true });
    if (fresh === undefined) return null;
    await tx.update(credentialCodes).set({ usedAt: dbNow() }).where(eq(credentialCodes.id, fresh.id));
    return secrets.open(fresh.codeSealed, sealContext(credentialId, 'code'));
  });
}
