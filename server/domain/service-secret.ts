import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { serviceSettings } from '../../db/schema';

/**
 * A random secret stored once per database, so every instance signs and checks cursors
 * alike without an operator having to configure one.
 */
export async function loadServiceSecret(db: Db, name: string): Promise<Buffer> {
  await db
    .insert(serviceSettings)
    .values({ key: name, value: randomBytes(32).toString('hex') })
    .onConflictDoNothing();
  const [row] = await db.select().from(serviceSettings).where(eq(serviceSettings.key, name));
  return Buffer.from(row!.value, 'hex');
}
