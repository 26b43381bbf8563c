import { randomBytes } from 'node:crypto';
import { and, eq, gt, lte, sql } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { consoleSessions, operators } from '../../../db/schema';
import { dbNowPlus } from '../db-clock';
import { hashSecret as hashToken } from '../secret-hash';
import type { Operator } from './operator-accounts';

/** A console sign-in lasts a working day; then the operator signs in again. */
export const CONSOLE_SESSION_MS = 12 * 60 * 60 * 1000;

/** Starts a console session; the token goes in the cookie, only its hash in the database. */
export async function startConsoleSession(db: Db, operator: Operator): Promise<{ token: string; expiresAt: Date }> {
  const token = `constok_${randomBytes(32).toString('base64url')}`;
  const [row] = await db
    .insert(consoleSessions)
    .values({ operatorId: operator.id, tokenHash: hashToken(token), expiresAt: dbNowPlus(CONSOLE_SESSION_MS) })
    .returning({ expiresAt: consoleSessions.expiresAt });
  return { token, expiresAt: row!.expiresAt };
}

/** The operator signed in with this cookie token, or null when it is unknown or expired. */
export async function consoleOperator(db: Db, token: string): Promise<Operator | null> {
  const [row] = await db
    .select({ id: operators.id, name: operators.name })
    .from(consoleSessions)
    .innerJoin(operators, eq(operators.id, consoleSessions.operatorId))
    .where(and(eq(consoleSessions.tokenHash, hashToken(token)), gt(consoleSessions.expiresAt, sql`now()`)));
  return row ?? null;
}

export async function endConsoleSession(db: Db, token: string): Promise<void> {
  await db.delete(consoleSessions).where(eq(consoleSessions.tokenHash, hashToken(token)));
}

/** Housekeeping: expired sign-ins are of no use to anyone. */
export async function deleteExpiredConsoleSessions(db: Db): Promise<void> {
  await db.delete(consoleSessions).where(lte(consoleSessions.expiresAt, sql`now()`));
}
