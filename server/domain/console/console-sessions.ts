import { and, eq, gt, lte, sql } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { consoleSessions, operators } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { dbNowPlus } from '../db-clock';
import { hashSecret as hashToken, mintSecret } from '../secret-hash';
import { authenticateConsoleKey, type Operator } from './operator-accounts';

/** A console sign-in lasts a working day; then the operator signs in again. */
export const CONSOLE_SESSION_MS = 12 * 60 * 60 * 1000;

/**
 * Signs an operator in with their console key: 401 invalid_console_key for anything but
 * an operator's key. The token goes in the cookie, only its hash in the database.
 */
export async function signInOperator(db: Db, consoleKey: string): Promise<{ operator: Operator; token: string }> {
  const operator = await authenticateConsoleKey(db, consoleKey);
  if (operator === null) throw new ApiError('invalid_console_key');
  const { secret: token, hash } = mintSecret('constok_');
  await db.insert(consoleSessions).values({ operatorId: operator.id, tokenHash: hash, expiresAt: dbNowPlus(CONSOLE_SESSION_MS) });
  return { operator, token };
}

/** The operator signed in with this cookie token; 401 console_sign_in_required without one, or for an unknown or expired one. */
export async function signedInOperator(db: Db, token: string | null): Promise<Operator> {
  const [row] =
    token === null
      ? []
      : await db
          .select({ id: operators.id, name: operators.name })
          .from(consoleSessions)
          .innerJoin(operators, eq(operators.id, consoleSessions.operatorId))
          .where(and(eq(consoleSessions.tokenHash, hashToken(token)), gt(consoleSessions.expiresAt, sql`now()`)));
  if (row === undefined) throw new ApiError('console_sign_in_required');
  return row;
}

/** Ends the sign-in of this cookie token; without one there is nothing to end. */
export async function endConsoleSession(db: Db, token: string | null): Promise<void> {
  if (token === null) return;
  await db.delete(consoleSessions).where(eq(consoleSessions.tokenHash, hashToken(token)));
}

/** Housekeeping: expired sign-ins are of no use to anyone. */
export async function deleteExpiredConsoleSessions(db: Db): Promise<void> {
  await db.delete(consoleSessions).where(lte(consoleSessions.expiresAt, sql`now()`));
}
