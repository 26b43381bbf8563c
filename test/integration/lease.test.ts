import { setTimeout as sleep } from 'node:timers/promises';
import { asc, eq, sql } from 'drizzle-orm';
import { boolean, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connectDatabase, type Database } from '../../db/client';
import { timestampMs } from '../../db/schema/columns';
import { Lease, type LeaseClaim } from '../../server/domain/lease';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

// A queue of its own, not one of the service's: the lease's mechanics, apart from any
// queue's rules. Timestamps as the service's tables keep them (ms precision).
const jobs = pgTable('leased_jobs', {
  id: uuid('id').primaryKey().defaultRandom(),
  position: integer('position').notNull(),
  ready: boolean('ready').notNull(),
  outcome: text('outcome'),
  claims: integer('claims').notNull().default(0),
  leaseOwner: text('lease_owner'),
  leaseExpiresAt: timestampMs('lease_expires_at'),
});
const lease = new Lease(jobs, { id: jobs.id, owner: jobs.leaseOwner, expiresAt: jobs.leaseExpiresAt });

// Long enough never to run out during a test; short enough to wait out.
const LONG_LEASE_MS = 60_000;
const SHORT_LEASE_MS = 20;
const PAST_SHORT_LEASE_MS = 150;

let testDb: TestDatabase;
let database: Database;

beforeAll(async () => {
  testDb = await createTestDatabase();
  database = connectDatabase(testDb.url, 4);
  await database.db.execute(sql`
    create table leased_jobs (
      id uuid primary key default gen_random_uuid(),
      position integer not null,
      ready boolean not null,
      outcome text,
      claims integer not null default 0,
      lease_owner text,
      lease_expires_at timestamptz(3)
    )`);
});
afterAll(async () => {
  await database?.close();
  await testDb?.drop();
});
beforeEach(async () => {
  await database.db.execute(sql`truncate leased_jobs`);
});

async function addJobs(...ready: boolean[]): Promise<string[]> {
  const rows = await database.db
    .insert(jobs)
    .values(ready.map((isReady, position) => ({ position, ready: isReady })))
    .returning({ id: jobs.id });
  return rows.map((row) => row.id);
}

function claim(owner: string, limit: number, leaseMs = LONG_LEASE_MS, db = database.db) {
  return lease
    .claim(db, { owner, leaseMs, limit, due: eq(jobs.ready, true), orderBy: asc(jobs.position), set: { claims: sql`${jobs.claims} + 1` } })
    .returning(lease.claimFields);
}

/** The ids a claim took; UPDATE ... RETURNING gives no order, so sorted. */
function idsOf(claims: readonly { id: string }[]): string[] {
  return claims.map((claimed) => claimed.id).sort();
}

async function row(id: string) {
  const [found] = await database.db.select().from(jobs).where(eq(jobs.id, id));
  return found!;
}

describe('Lease', () => {
  it('claims due rows nobody holds, in order, up to the limit, and skips rows whose lease holds', async () => {
    const [first, notReady, second, third] = await addJobs(true, false, true, true);

    // The limit takes the first two in order; the third waits.
    expect(idsOf(await claim('a', 2))).toEqual([first!, second!].sort());
    expect(await row(first!)).toMatchObject({ leaseOwner: 'a', claims: 1 });

    expect(idsOf(await claim('b', 5))).toEqual([third]);
    expect(await claim('c', 5)).toEqual([]);
    expect(await row(notReady!)).toMatchObject({ leaseOwner: null, claims: 0 });
  });

  it('skips rows another claim has locked and not yet committed, without waiting for it', async () => {
    const [first, second] = await addJobs(true, true);
    await database.db.transaction(async (tx) => {
      expect(idsOf(await claim('a', 1, LONG_LEASE_MS, tx))).toEqual([first]);
      // Another connection, while a's transaction holds the first row's lock.
      expect(idsOf(await claim('b', 2))).toEqual([second]);
    });
    expect(await row(first!)).toMatchObject({ leaseOwner: 'a' });
  });

  it('lets another owner claim a row whose lease ran out, and refuses the old holder from then on', async () => {
    const [id] = await addJobs(true);
    const [old] = await claim('a', 1, SHORT_LEASE_MS);
    await sleep(PAST_SHORT_LEASE_MS);

    const [taken] = await claim('b', 1);
    expect(taken).toMatchObject({ id, leaseOwner: 'b' });

    expect(await lease.renew(database.db, id!, 'a', LONG_LEASE_MS)).toBe(false);
    expect(await lease.release(database.db, [old!], { set: { outcome: 'late result of a' } }).returning({ id: jobs.id })).toEqual([]);
    expect(await row(id!)).toMatchObject({ leaseOwner: 'b', outcome: null, claims: 2 });

    expect(await lease.renew(database.db, id!, 'b', LONG_LEASE_MS)).toBe(true);
  });

  it('refuses the writes of an earlier claim once the same owner claimed the row again', async () => {
    const [id] = await addJobs(true);
    const [first] = await claim('a', 1, SHORT_LEASE_MS);
    await sleep(PAST_SHORT_LEASE_MS);
    const [second] = await claim('a', 1);
    expect(second!.leaseToken).not.toBe(first!.leaseToken);

    expect(await lease.release(database.db, [first!], { set: { outcome: 'first' } }).returning({ id: jobs.id })).toEqual([]);
    expect(await lease.release(database.db, [second!], { set: { outcome: 'second' } }).returning({ id: jobs.id })).toEqual([{ id }]);
    expect(await row(id!)).toMatchObject({ outcome: 'second', leaseOwner: null, leaseExpiresAt: null });
  });

  it('keeps a renewed lease past its first expiry', async () => {
    const [id] = await addJobs(true);
    await claim('a', 1, SHORT_LEASE_MS);
    expect(await lease.renew(database.db, id!, 'a', LONG_LEASE_MS)).toBe(true);
    await sleep(PAST_SHORT_LEASE_MS);
    expect(await claim('b', 1)).toEqual([]);
  });

  it('renews only while the extra condition holds', async () => {
    const [id] = await addJobs(true);
    await claim('a', 1);
    expect(await lease.renew(database.db, id!, 'a', LONG_LEASE_MS, eq(jobs.ready, false))).toBe(false);
    expect(await lease.renew(database.db, id!, 'a', LONG_LEASE_MS, eq(jobs.ready, true))).toBe(true);
  });

  it('frees released rows for the next claim, writing the outcome with the release', async () => {
    const [first, second] = await addJobs(true, true);
    const claimed = await claim('a', 2);

    await lease.release(database.db, claimed, { set: { outcome: 'done' } });
    expect(await row(first!)).toMatchObject({ leaseOwner: null, leaseExpiresAt: null, outcome: 'done' });
    expect(await row(second!)).toMatchObject({ leaseOwner: null, leaseExpiresAt: null, outcome: 'done' });
    expect(idsOf(await claim('b', 2))).toEqual([first!, second!].sort());
  });

  it('releases a batch under the claims of several owners, whatever characters their names hold', async () => {
    const [first, second] = await addJobs(true, true);
    const [a] = await claim('a "quoted", \\ {braced}', 1);
    const [b] = await claim('b', 1);

    await lease.release(database.db, [a!, b!], { set: { outcome: 'done' } });
    expect(await row(first!)).toMatchObject({ leaseOwner: null, outcome: 'done' });
    expect(await row(second!)).toMatchObject({ leaseOwner: null, outcome: 'done' });
  });

  it('releases nothing when the extra condition fails, or when given no claims', async () => {
    const [id] = await addJobs(true);
    const claimed = await claim('a', 1);

    expect(await lease.release(database.db, claimed, { set: { outcome: 'no' }, where: eq(jobs.ready, false) }).returning({ id: jobs.id })).toEqual([]);
    expect(await lease.release(database.db, [] as LeaseClaim[], { set: { outcome: 'no' } }).returning({ id: jobs.id })).toEqual([]);
    expect(await row(id!)).toMatchObject({ leaseOwner: 'a', outcome: null });
  });
});
