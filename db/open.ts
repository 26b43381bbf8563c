import { connectDatabase, type Database } from './client';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './embedded-postgres';
import { applyMigrations } from './migrate';

export interface DatabaseSettings {
  url: string | null;
  poolSize: number;
  embedded: { dir: string; port: number };
}

export interface OpenDatabase extends Database {
  url: string;
}

/**
 * Connects to DATABASE_URL, or starts the embedded PostgreSQL when none is set, and
 * applies the committed migrations before anything else touches the schema.
 */
export async function openDatabase(settings: DatabaseSettings, onLog: (line: string) => void = () => {}): Promise<OpenDatabase> {
  let embedded: EmbeddedDatabase | null = null;
  let url = settings.url;
  if (url === null) {
    embedded = await startEmbeddedPostgres({ ...settings.embedded, onLog });
    url = embedded.url;
  }
  const database = connectDatabase(url, settings.poolSize);
  try {
    await applyMigrations(database);
  } catch (error) {
    await database.close();
    await embedded?.stop();
    throw error;
  }
  return {
    ...database,
    url,
    close: async () => {
      await database.close();
      await embedded?.stop();
    },
  };
}
