import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { DatabaseAvailability } from './database-availability';
import { createLogger } from './log';

// The state machine alone, with a probe the test answers; test/integration/database-outage.test.ts
// runs it against a PostgreSQL server that really stops.

/** A connection refused under a query, as postgres.js rejects it. */
const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', query: 'select 1' });

function availability() {
  const lines: string[] = [];
  const database = { up: true, probes: 0 };
  const probe = async () => {
    database.probes += 1;
    if (!database.up) throw refused;
  };
  const said = () => lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
  // Settling for 300 ms rather than the service's 10 s, so the first test waits it out quickly.
  const subject = new DatabaseAvailability(probe, createLogger('info', { write: (line: string) => lines.push(line) }), 300);
  return { subject, database, said };
}

describe('DatabaseAvailability', () => {
  it('says an outage once, however many errors meet it, and once that it is back, waking what waits', async () => {
    const { subject, database, said } = availability();
    await sleep(400); // past the settling time of the process's start
    expect(subject.absorb(new Error('syntax error'))).toBe(false);
    database.up = false;
    for (let i = 0; i < 5; i++) expect(subject.absorb(refused)).toBe(true);
    expect(subject.reachable).toBe(false);
    let woken = false;
    const waiting = subject.whenReachable().then(() => (woken = true));
    await sleep(1_300);
    expect(woken).toBe(false);
    database.up = true;
    await waiting;
    expect(subject.reachable).toBe(true);
    expect(said()).toEqual(['database unreachable: requests answer 503 service_unavailable and workers wait until it is back', 'database reachable again']);
    subject.close();
  });

  it('checks an error met just after the database came back with a probe: a late error of the outage is not a second one', async () => {
    const { subject, database, said } = availability();
    // Just started: the database counts as just back.
    expect(subject.absorb(refused)).toBe(true);
    await subject.whenReachable();
    expect(database.probes).toBe(1);
    expect(subject.reachable).toBe(true);
    expect(said()).toEqual([]);

    // Really down again: the probe says so, and the outage is reported.
    database.up = false;
    expect(subject.absorb(refused)).toBe(true);
    let woken = false;
    const waiting = subject.whenReachable().then(() => (woken = true));
    await sleep(200);
    expect(subject.reachable).toBe(false);
    expect(woken).toBe(false);
    database.up = true;
    await waiting;
    expect(said()).toEqual(['database unreachable: requests answer 503 service_unavailable and workers wait until it is back', 'database reachable again']);
    subject.close();
  });
});
