import { randomBytes } from 'node:crypto';
import { Socket } from 'node:net';
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

// While the server is down, a query must fail within seconds (the API answers 503, the
// workers wait) rather than hang: a connection attempt that gets no answer gives up after
// CONNECT_TIMEOUT_SECS. A server that is down refuses at once; the bound is for a silent
// one, and must not be met by a live server on a loaded host: 3 s was, on two busy cores
// (a new backend's start, a stalled event loop), and the service declared an outage that
// was not one. postgres.js also waits before each new attempt of a connection
// whose last one failed, growing to 20 s by default; a request arriving then waited that
// long for its 503, and the first queries after the outage as long for the server that
// was back. Capped at half a second: attempts are one per query, never a busy loop.
const CONNECT_TIMEOUT_SECS = 10;
const MAX_RECONNECT_DELAY_SECS = 0.5;

function reconnectDelaySecs(failedAttempts: number): number {
  return Math.min(0.05 * 2 ** failedAttempts, MAX_RECONNECT_DELAY_SECS);
}

export function connectDatabase(url: string, poolSize: number): Database {
  const applicationName = `browser-device-operator/${randomBytes(4).toString('hex')}`;
  // `socket` is an option postgres.js has but does not declare in its types.
  const options: postgres.Options<{}> & { socket: ReturnType<typeof noDelaySockets> } = {
    max: poolSize,
    onnotice: () => {},
    connect_timeout: CONNECT_TIMEOUT_SECS,
    backoff: reconnectDelaySecs,
    // Timestamps come back as Date objects; the API formats them (RFC 3339, ms, UTC).
    connection: { application_name: applicationName, TimeZone: 'UTC' },
    socket: noDelaySockets(),
  };
  const sql = postgres(url, options);
  const db = drizzle(preparingStatements(sql), { schema });
  return {
    db,
    sql,
    applicationName,
    close: () => sql.end({ timeout: 5 }),
  };
}

/**
 * postgres.js's sockets, with Nagle's algorithm off. It pipelines the statements a
 * transaction sends before the first answers (device-transitions.ts, submit-task.ts), but
 * writes them as they come: a first write of a kilobyte or more at once, the rest on the
 * next turn of the event loop. With Nagle's algorithm on (a net.Socket's default, and
 * postgres.js leaves it) the second write waited for the acknowledgement of the first,
 * which came with its answer: a round trip, measured with round-trip-counter.ts.
 *
 * postgres.js takes a custom socket as connected: this one is connecting, and writes to it
 * wait in Node until it is. Its errors reach postgres.js as its own socket's do, and the
 * connect timeout runs until the server is ready, as it does for its own. Several hosts
 * are tried in turn, as postgres.js does.
 */
function noDelaySockets(): (options: { host: string[]; port: number[]; path: string | false }) => Socket {
  let hostIndex = 0;
  return ({ host, port, path }) => {
    const socket = new Socket();
    socket.setNoDelay(true);
    if (path) return socket.connect(path);
    const index = hostIndex % port.length;
    hostIndex += 1;
    return socket.connect(port[index]!, host[index]!);
  };
}

/**
 * The client drizzle runs its queries on, with every statement prepared. drizzle passes
 * `prepare: false` to postgres.js for any query it was not given a name for, and
 * postgres.js then sends a statement with parameters in two round trips (parse and
 * describe, then bind and execute), which PostgreSQL parses and plans anew each time:
 * two waits for a core on a busy host, and about 2 ms of the database's CPU, for each
 * statement of every request and task step. Prepared, a statement costs one round trip
 * once its connection has seen it (postgres.js keeps them per connection, for the
 * connection's life), and PostgreSQL reuses its plan. Transactions and savepoints hand
 * drizzle a client of their own, prepared the same way.
 */
function preparingStatements<Client extends postgres.Sql | postgres.TransactionSql>(client: Client): Client {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property === 'unsafe') {
        return (query: string, parameters?: postgres.ParameterOrJSON<never>[], options?: postgres.UnsafeQueryOptions) => target.unsafe(query, parameters, { ...options, prepare: true });
      }
      if (property === 'begin' || property === 'savepoint') {
        const open = Reflect.get(target, property, receiver) as (...args: unknown[]) => Promise<unknown>;
        return (...args: unknown[]) => {
          const work = args.pop() as (transaction: postgres.TransactionSql) => unknown;
          return open.call(target, ...args, (transaction: postgres.TransactionSql) => work(preparingStatements(transaction)));
        };
      }
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
}
