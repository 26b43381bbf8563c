import { sql, type SQL } from 'drizzle-orm';

// Timestamps that instances compare with each other come from the database clock, the one
// clock every instance shares: leases, due times and deadlines written by one instance are
// read against now() by another, and a task's created_at, its steps' created_at and its
// finished_at stay in order whatever the app servers' clocks say (usage counts them).

/** The current transaction's start time. */
export function dbNow(): SQL {
  return sql`now()`;
}

/** The current transaction's start time plus `ms` milliseconds (minus, when negative). */
export function dbNowPlus(ms: number): SQL {
  return sql`now() + make_interval(secs => ${ms / 1000})`;
}
