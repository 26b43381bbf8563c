import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { and, eq, isNotNull } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { escalations } from '../../../db/schema';
import { loadServiceSecret } from '../service-secret';

/**
 * A credentials answer between the resolve that receives it and the task run that types it.
 * The two may be different instances (any instance takes the callback; the device's host
 * runs the task), so it waits in `escalations.sealed_answer`, AES-256-GCM encrypted under a
 * key derived (HKDF-SHA256) from a per-database secret, the task id and a random salt. The
 * run takes it out (the column is set back to null in the same transaction) and keeps it
 * only in memory; a task that ends first has it cleared by endTask. The clear value never
 * reaches a step, an event, the audit log or a log line.
 */
const SECRET_NAME = 'credential_seal_key';
const VERSION = 'v1';

export type Credentials = Record<string, string>;

function taskKey(secret: Buffer, taskId: string, salt: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, salt, `operator credentials ${taskId}`, 32));
}

export async function sealCredentials(db: Db, taskId: string, values: Credentials): Promise<string> {
  const secret = await loadServiceSecret(db, SECRET_NAME);
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', taskKey(secret, taskId, salt), iv);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(values), 'utf8'), cipher.final()]);
  return [VERSION, salt, iv, cipher.getAuthTag(), sealed].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
}

function unseal(secret: Buffer, taskId: string, sealed: string): Credentials {
  const [version, salt, iv, tag, body] = sealed.split('.');
  if (version !== VERSION || salt === undefined || iv === undefined || tag === undefined || body === undefined) return {};
  try {
    const decipher = createDecipheriv('aes-256-gcm', taskKey(secret, taskId, Buffer.from(salt, 'base64url')), Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    const clear = Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    return JSON.parse(clear) as Credentials;
  } catch {
    // A key that changed (the settings row was reset) or a damaged value: nothing to type.
    return {};
  }
}

/** Takes every credentials answer waiting for the task out of the database, into the caller's memory. */
export async function takeCredentials(db: Db, taskId: string): Promise<Credentials> {
  const waiting = and(eq(escalations.taskId, taskId), isNotNull(escalations.sealedAnswer));
  // Almost every run has none: one indexed read then, instead of a locking transaction.
  const [any] = await db.select({ id: escalations.id }).from(escalations).where(waiting).limit(1);
  if (any === undefined) return {};
  const sealedRows = await db.transaction(async (tx) => {
    const rows = await tx
      .select({ id: escalations.id, sealed: escalations.sealedAnswer })
      .from(escalations)
      .where(waiting)
      .for('update');
    if (rows.length > 0) await tx.update(escalations).set({ sealedAnswer: null }).where(waiting);
    return rows;
  });
  if (sealedRows.length === 0) return {};
  const secret = await loadServiceSecret(db, SECRET_NAME);
  return Object.assign({}, ...sealedRows.map((row) => unseal(secret, taskId, row.sealed!))) as Credentials;
}
