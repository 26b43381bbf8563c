import { sql } from 'drizzle-orm';
import type { Tx } from '../../../db/client';

/** NOTIFY channel carrying the id of a session that changed (revoked, hold taken or dropped). */
export const SESSION_CHANNEL = 'operator_sessions';

/** Tells every instance's gateway, on commit, to re-read the session. */
export async function notifySessionChange(tx: Tx, sessionId: string): Promise<void> {
  await tx.execute(sql`select pg_notify(${SESSION_CHANNEL}, ${sessionId})`);
}
