import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/test-service';

// An idle service must not poll its database in a tight loop: every worker waits for a
// notification or its interval.
let test: TestService;

beforeAll(async () => {
  test = await startTestService();
});
afterAll(async () => {
  await test?.stop();
});

describe('an idle service', () => {
  it('commits only a handful of transactions per second', async () => {
    const committed = async () => {
      const [row] = await test.service.services.db.execute<{ commits: string }>(sql`select xact_commit::text as commits from pg_stat_database where datname = current_database()`);
      return Number(row!.commits);
    };
    // Let start-up work (reconciliation, first sweeps) settle first.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const before = await committed();
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const perSecond = ((await committed()) - before) / 3;
    expect(perSecond).toBeLessThan(20);
  });
});
