import { randomBytes } from 'node:crypto';
import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import * as schema from './schema';

export type Db = PostgresJsDatabase<typeof schema>;
/** A transaction handle; domain functions that must join a caller's transaction take this. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type DbOrTx = Db | Tx;

export interface Database {
  db: Db;
  /** The raw postgres.js client, for LISTEN/NOTIFY and the few statements drizzle cannot express. */
  sql: postgres.Sql;
  /** This pool's name in pg_stat_activity, unique per process: its use can be counted there. */
  applicationName: string;
  close(): Promise<void>;
}

export function connectDatabase(url: string, poolSize: number): Database {
  const applicationName = `browser-device-operator/${randomBytes(4).toString('hex')}`;
  const sql = postgres(url, {
    max: poolSize,
    onnotice: () => {},
    // Timestamps come back as Date objects; the API formats them (RFC 3339, ms, UTC).
    connection: { application_name: applicationName, TimeZone: 'UTC' },
  });
  const db = drizzle(sql, { schema });
  return {
    db,
    sql,
    applicationName,
    close: () => sql.end({ timeout: 5 }),
  };
}
