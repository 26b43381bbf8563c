import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../test/support/free-port';
import { startPostgresFaultProxy } from '../test/support/postgres-fault-proxy';
import { startRoundTripCounter } from '../test/support/round-trip-counter';
import { createTestDatabase, type TestDatabase } from '../test/support/test-database';
import { connectDatabase, type Database } from './client';

let testDb: TestDatabase;
let database: Database;

beforeAll(async () => {
  testDb = await createTestDatabase();
  // One connection: the session whose prepared statements the test reads is the one drizzle used.
  database = connectDatabase(testDb.url, 1);
});

afterAll(async () => {
  await database?.close();
  await testDb?.drop();
});

/** How many statements this connection holds prepared whose text contains `marker`. */
async function preparedWith(marker: string, reader: Database['db'] = database.db): Promise<number> {
  const rows = await reader.execute(sql`select count(*)::int as prepared from pg_prepared_statements where statement like ${`%${marker}%`} and statement not like '%pg_prepared_statements%'`);
  return (rows[0] as { prepared: number }).prepared;
}

describe('connectDatabase', () => {
  it("prepares drizzle's statements once per connection, outside and inside transactions", async () => {
    // A statement with a parameter: unprepared, postgres.js would parse it anew on every run.
    const read = () => database.db.execute(sql`select ${7}::int + 1 as marker_outside`);
    expect(await read()).toEqual([{ marker_outside: 8 }]);
    await read();
    expect(await preparedWith('marker_outside')).toBe(1);

    await database.db.transaction(async (tx) => {
      await tx.execute(sql`select ${1}::int as marker_inside`);
      await tx.transaction(async (savepoint) => {
        await savepoint.execute(sql`select ${2}::int as marker_savepoint`);
      });
    });
    expect(await preparedWith('marker_inside')).toBe(1);
    expect(await preparedWith('marker_savepoint')).toBe(1);
  });

  it('still rolls back a failed transaction and answers the next statement', async () => {
    await database.db.execute(sql`create table prepared_rollback (id int primary key)`);
    await expect(
      database.db.transaction(async (tx) => {
        await tx.execute(sql`insert into prepared_rollback values (${1})`);
        await tx.execute(sql`insert into prepared_rollback values (${1})`);
      }),
    ).rejects.toThrow();
    expect(await database.db.execute(sql`select count(*)::int as n from prepared_rollback`)).toEqual([{ n: 0 }]);
  });

  it('sends statements sent together in one round trip, a long one first (no Nagle wait for its acknowledgement)', async () => {
    const counter = await startRoundTripCounter(testDb.url);
    const proxied = connectDatabase(counter.url, 1);
    try {
      // A write of a kilobyte or more goes out at once; the next follows a moment later.
      const pair = (tx: Parameters<Parameters<Database['db']['transaction']>[0]>[0]) =>
        Promise.all([tx.execute(sql`select length(${'x'.repeat(2_000)}) as long_one`), tx.execute(sql`select ${1}::int as short_one`)]);
      await proxied.db.transaction(pair);
      // BEGIN, the pair, COMMIT.
      expect(await counter.count(() => proxied.db.transaction(pair))).toBe(3);
    } finally {
      await proxied.close();
      await counter.close();
    }
  });

  it('fails the queries of a connection lost as it opens, and leaves no rejection unhandled', async () => {
    // postgres.js's first statement on a new connection is its read of the array types;
    // the proxy cuts the connection there, then refuses: a database going away as a
    // connection opens. Unpatched, that read's rejection reached nobody and ended the process.
    const proxy = await startPostgresFaultProxy(testDb.url, await freePort());
    const proxied = connectDatabase(proxy.url, 1);
    const unhandled: unknown[] = [];
    const collect = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', collect);
    try {
      proxy.cutAfterStartup();
      await expect(proxied.db.execute(sql`select 1 as lost`)).rejects.toThrow();
      expect(proxy.cuts).toBeGreaterThan(0);
      // Rejections are reported unhandled after the turn of the event loop they happen in.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(unhandled).toEqual([]);

      await proxy.restore();
      expect(await proxied.db.execute(sql`select ${'{a,b}'}::text[] as back`)).toEqual([{ back: ['a', 'b'] }]);
    } finally {
      process.off('unhandledRejection', collect);
      await proxied.close();
      await proxy.close();
    }
  });
});
