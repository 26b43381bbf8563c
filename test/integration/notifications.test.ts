import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type Database } from '../../db/client';
import { Notifications } from '../../server/domain/channels/notifications';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

// The process's one LISTEN connection on real PostgreSQL: every channel on one connection,
// each subscriber told of its own channel's notifications, and all of them told once the
// connection came back after it was cut (notifications sent meanwhile are lost).

let testDatabase: TestDatabase;
let database: Database;
let notifications: Notifications;
const errors: unknown[] = [];

beforeAll(async () => {
  testDatabase = await createTestDatabase();
  database = connectDatabase(testDatabase.url, 2);
  notifications = await Notifications.start(database.sql, ['test_first', 'test_second'], (error) => errors.push(error));
});

afterAll(async () => {
  await notifications.close();
  await database.close();
  await testDatabase.drop();
});

/** Resolves with the first value `subscribe` hands its callback. */
function next<T>(subscribe: (callback: (value: T) => void) => () => void): Promise<T> {
  return new Promise((resolve) => {
    const unsubscribe = subscribe((value) => {
      unsubscribe();
      resolve(value);
    });
  });
}

/** This database's sessions that are listening. */
async function listeningBackends(): Promise<number[]> {
  const rows = await database.sql<Array<{ pid: number }>>`
    select pid from pg_stat_activity where datname = current_database() and query ilike 'listen %'`;
  return rows.map((row) => row.pid);
}

describe('Notifications', () => {
  it('listens on every channel over one connection and hands each subscriber its own channel', async () => {
    expect(await listeningBackends()).toHaveLength(1);
    const heard: string[] = [];
    const unsubscribeFirst = notifications.subscribe('test_first', { onNotify: (payload) => heard.push(`first:${payload}`), onReconnect: () => undefined });
    const second = next<string>((callback) => notifications.subscribe('test_second', { onNotify: callback, onReconnect: () => undefined }));

    await database.sql`select pg_notify('test_first', 'one'), pg_notify('test_second', 'two')`;
    expect(await second).toBe('two');
    expect(heard).toEqual(['first:one']);

    // Unsubscribed: told nothing more.
    unsubscribeFirst();
    const later = next<string>((callback) => notifications.subscribe('test_first', { onNotify: callback, onReconnect: () => undefined }));
    await database.sql`select pg_notify('test_first', 'three')`;
    expect(await later).toBe('three');
    expect(heard).toEqual(['first:one']);
  });

  it('refuses a channel it does not listen on', () => {
    expect(() => notifications.subscribe('test_unknown', { onNotify: () => undefined, onReconnect: () => undefined })).toThrow(/test_unknown/);
  });

  it('tells every subscriber once its connection came back, and hears notifications again', async () => {
    const reconnects: string[] = [];
    const unsubscribers = ['test_first', 'test_second'].map((channel) =>
      notifications.subscribe(channel, { onNotify: () => undefined, onReconnect: () => reconnects.push(channel) }),
    );
    const [listener] = await listeningBackends();
    await database.sql`select pg_terminate_backend(${listener!})`;
    const deadline = Date.now() + 10_000;
    while (reconnects.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(reconnects.sort()).toEqual(['test_first', 'test_second']);
    expect(await listeningBackends()).not.toContain(listener);

    const heard = next<string>((callback) => notifications.subscribe('test_second', { onNotify: callback, onReconnect: () => undefined }));
    await database.sql`select pg_notify('test_second', 'after')`;
    expect(await heard).toBe('after');
    unsubscribers.forEach((unsubscribe) => unsubscribe());
    expect(errors).toEqual([]);
  });
});
