import { sql, type SQL } from 'drizzle-orm';

// Task timestamps come from the database clock, the one clock every instance shares:
// steps are stamped by PostgreSQL too, so a task's created_at, its steps' created_at and
// its finished_at stay in order whatever the app servers' clocks say (usage counts them).

/** The current transaction's start time. */
export function dbNow(): SQL {
  return sql`now()`;
}

export function dbNowPlus(ms: number): SQL {
  return sql`now() + make_interval(secs => ${ms / 1000})`;
}
