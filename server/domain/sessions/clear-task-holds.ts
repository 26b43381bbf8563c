import { eq } from 'drizzle-orm';
import type { Tx } from '../../../db/client';
import { sessions } from '../../../db/schema';
import { notifySessionChange } from './session-channel';

/**
 * A task that ends while a session holds it (canceled, device lost) takes the hold with
 * it, so the session cannot keep relaying input to a device whose slot moved on.
 * Called by endTask inside its transaction, with the task row locked.
 */
export async function clearHoldsOnTask(tx: Tx, taskId: string): Promise<void> {
  const cleared = await tx
    .update(sessions)
    .set({ holdTaskId: null, holdExpiresAt: null })
    .where(eq(sessions.holdTaskId, taskId))
    .returning({ id: sessions.id });
  for (const { id } of cleared) await notifySessionChange(tx, id);
}
