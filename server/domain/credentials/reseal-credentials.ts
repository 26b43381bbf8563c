import { eq } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { credentialCodes, credentials } from '../../../db/schema';
import { sealContext } from './credential-resource';
import type { SecretBox } from './secret-box';

/**
 * Key rotation, run at start: every sealed value not under the current key is opened (with
 * OPERATOR_SECRETS_KEY_PREVIOUS) and sealed again under OPERATOR_SECRETS_KEY, one
 * credential per transaction. A value neither key opens stops the start: the service must
 * not run with secrets it cannot read, nor overwrite them. Returns how many credentials
 * were sealed again.
 */
export async function resealCredentials(db: Db, box: SecretBox): Promise<number> {
  const rows = await db.select().from(credentials);
  let resealed = 0;
  for (const row of rows) {
    const fields = { password: row.passwordSealed, totp: row.totpSealed, notes: row.notesSealed } as const;
    const stale = Object.entries(fields).filter(([, sealed]) => sealed !== null && box.isStale(sealed));
    if (stale.length === 0) continue;
    const changes: Partial<typeof credentials.$inferInsert> = {};
    for (const [field, sealed] of stale as Array<[keyof typeof fields, string]>) {
      const context = sealContext(row.id, field);
      const again = box.seal(openOrExplain(box, sealed, context), context);
      if (field === 'password') changes.passwordSealed = again;
      if (field === 'totp') changes.totpSealed = again;
      if (field === 'notes') changes.notesSealed = again;
    }
    await db.update(credentials).set(changes).where(eq(credentials.id, row.id));
    resealed += 1;
  }
  for (const code of await db.select().from(credentialCodes)) {
    if (!box.isStale(code.codeSealed)) continue;
    const context = sealContext(code.credentialId, 'code');
    await db.update(credentialCodes).set({ codeSealed: box.seal(openOrExplain(box, code.codeSealed, context), context) }).where(eq(credentialCodes.id, code.id));
  }
  return resealed;
}

function openOrExplain(box: SecretBox, sealed: string, context: string): string {
  try {
    return box.open(sealed, context);
  } catch (error) {
    throw new Error(
      'The credential vault holds secrets sealed under a key that neither OPERATOR_SECRETS_KEY nor OPERATOR_SECRETS_KEY_PREVIOUS is: start with the key they were sealed under (as OPERATOR_SECRETS_KEY_PREVIOUS while rotating).',
      { cause: error },
    );
  }
}
