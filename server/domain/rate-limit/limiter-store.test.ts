import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase } from '../../../db/client';
import { applyMigrations } from '../../../db/migrate';
import { createTestDatabase, type TestDatabase } from '../../../test/support/test-database';
import { LimiterStore } from './limiter-store';

// The PostgreSQL store's table comes from the migrations. The store, connecting as a role
// that may use the table but not create anything (PostgreSQL 15 gives no one CREATE on
// the public schema), proves it issues no DDL of its own: rate-limiter-flexible's
// `CREATE TABLE IF NOT EXISTS` at start is refused for the missing privilege even when
// the table exists, and from two instances starting at once on a new database it
// collided ("type rate_limits already exists") and one of them failed to start.
let database: TestDatabase;
let admin: postgres.Sql;
const role = `limiter_${randomBytes(4).toString('hex')}`;
let store: LimiterStore;

beforeAll(async () => {
  database = await createTestDatabase();
  const migrated = connectDatabase(database.url, 2);
  await applyMigrations(migrated);
  await migrated.close();
  admin = postgres(database.url, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create role ${role} login`);
  await admin.unsafe(`grant select, insert, update, delete on rate_limits to ${role}`);
  const url = new URL(database.url);
  url.username = role;
  store = LimiterStore.open('postgres', url.toString());
});

afterAll(async () => {
  await store?.close();
  // The role is the cluster's, not the database's: its grants go first, then the role.
  await admin?.unsafe(`drop owned by ${role}`);
  await admin?.unsafe(`drop role ${role}`);
  await admin?.end();
  await database?.drop();
});

describe('the PostgreSQL limiter store', () => {
  it('counts in the migrations\' rate_limits table, shared by limiters of one prefix, creating nothing', async () => {
    const options = { points: 3, duration: 60, keyPrefix: 'test' };
    const [first, second] = [store.limiter(options), store.limiter(options)];
    const spent = [await first.consume('k'), await second.consume('k'), await first.consume('k')].map((state) => state.remainingPoints);
    expect(spent).toEqual([2, 1, 0]);
    await expect(second.consume('k')).rejects.toMatchObject({ remainingPoints: 0 });
    const rows = await admin`select key, points from rate_limits`;
    expect(rows).toEqual([{ key: 'test:k', points: 4 }]);
  });
});
