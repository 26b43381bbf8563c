import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import type { Database } from './client';

const MIGRATIONS_FOLDER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

// Any constant works; it only has to be the same for every instance of the service.
const MIGRATION_LOCK_KEY = 7_151_001;

/**
 * Applies the committed drizzle-kit migrations. Several instances may start at once on
 * one database, so the migrator runs under a session advisory lock held on a reserved
 * connection.
 */
export async function applyMigrations(database: Database): Promise<void> {
  const lockConnection = await database.sql.reserve();
  try {
    await lockConnection`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`;
    await migrate(database.db, { migrationsFolder: MIGRATIONS_FOLDER });
  } finally {
    await lockConnection`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`.catch(() => undefined);
    lockConnection.release();
  }
}
