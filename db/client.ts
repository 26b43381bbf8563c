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
  close(): Promise<void>;
}

export function connectDatabase(url: string, poolSize: number): Database {
  const sql = postgres(url, {
    max: poolSize,
    onnotice: () => {},
    // Timestamps come back as Date objects; the API formats them (RFC 3339, ms, UTC).
    connection: { application_name: 'browser-device-operator', TimeZone: 'UTC' },
  });
  const db = drizzle(sql, { schema });
  return {
    db,
    sql,
    close: () => sql.end({ timeout: 5 }),
  };
}
