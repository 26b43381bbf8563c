import { eq } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { operators } from '../../../db/schema';
import { generateKeyId, generateSecret } from '../keys/api-key-format';
import { hashSecret, secretMatches } from '../secret-hash';

// Console keys: svc_console_<key_id>_<secret>, built like API keys (12 base32 characters,
// 43 base64url without `_`), shown once when the operator is created, SHA-256 stored.
const CONSOLE_KEY_PATTERN = /^svc_console_([a-z2-7]{12})_([A-Za-z0-9-]{43})$/;

export interface Operator {
  id: string;
  name: string;
}

/** `admin -- operator:create --name N`: a console sign-in for one of the preview's operators. */
export async function createOperator(db: Db, name: string): Promise<{ operator_id: string; console_key: string }> {
  const keyId = generateKeyId();
  const secret = generateSecret();
  const [row] = await db.insert(operators).values({ name, keyId, secretHash: hashSecret(secret) }).returning({ id: operators.id });
  return { operator_id: row!.id, console_key: `svc_console_${keyId}_${secret}` };
}

/** The operator a console key belongs to, or null for anything else (compared in constant time). */
export async function authenticateConsoleKey(db: Db, consoleKey: string): Promise<Operator | null> {
  const match = CONSOLE_KEY_PATTERN.exec(consoleKey);
  if (match === null) return null;
  const [, keyId, secret] = match;
  const [row] = await db.select().from(operators).where(eq(operators.keyId, keyId!));
  if (row === undefined || !secretMatches(secret!, row.secretHash)) return null;
  return { id: row.id, name: row.name };
}
