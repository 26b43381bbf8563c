import { and, eq, getTableColumns, inArray, isNull, lte, or, sql, type Placeholder, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable, PgUpdateSetSource } from 'drizzle-orm/pg-core';
import type { DbOrTx } from '../../db/client';
import { dbNow, dbNowPlus } from './db-clock';

/** Where a table keeps the lease on each of its rows. */
export interface LeaseColumns {
  /** The primary key. */
  id: PgColumn;
  /** Who holds the lease: a server process (services.instanceId); null when nobody does. */
  owner: PgColumn;
  /** Until when the lease holds, by the database clock (timestamptz). */
  expiresAt: PgColumn;
}

/**
 * One claim of one row: what every write made under it is fenced by. Two claims of a row
 * by the same owner differ by their token, so a late write of an attempt whose lease ran
 * out (and was claimed again, maybe by the same process) changes nothing.
 */
export interface LeaseClaim {
  id: string;
  leaseOwner: string;
  /** The expiry exactly as the claim stored it, as text. */
  leaseToken: string;
}

export interface ClaimRequest<TTable extends PgTable> {
  owner: string;
  leaseMs: number;
  /** A placeholder when the claim is prepared once and run with a limit each time. */
  limit: number | Placeholder;
  /** The table's own rule for which rows are work to do now. */
  due: SQL | undefined;
  /** Which due rows go first. */
  orderBy: SQL | PgColumn;
  /** More columns the claim writes (an attempt counter, a due time moved to the expiry). */
  set?: PgUpdateSetSource<TTable>;
}

export interface ReleaseChanges<TTable extends PgTable> {
  /** The outcome written with the release; it may set the expiry column to a next due time. */
  set?: PgUpdateSetSource<TTable>;
  /** The table's own condition for the write, on top of the lease fence. */
  where?: SQL;
}

/**
 * Work leases held in a table's rows, for workers of several processes sharing one database:
 * a row is claimed by writing an owner and an expiry, kept by renewing the expiry, and given
 * up by clearing both. A holder that dies stops renewing; once its lease runs out the row
 * may be claimed by another owner, and from then on the old holder's renewals and releases
 * are refused (fencing), so a lost lease never overwrites the new holder's work.
 *
 * The table-specific rules stay with each queue: which rows are due, in which order, what a
 * claim and a release write besides the lease.
 */
export class Lease<TTable extends PgTable> {
  readonly #ownerKey: string;
  readonly #expiresAtKey: string;

  constructor(
    private readonly table: TTable,
    private readonly columns: LeaseColumns,
  ) {
    this.#ownerKey = propertyKey(table, columns.owner);
    this.#expiresAtKey = propertyKey(table, columns.expiresAt);
  }

  /**
   * What makes a LeaseClaim, to read back with a claim: `.returning({ ...lease.claimFields })`.
   * Aliased, so the claim can also be read as a CTE.
   */
  get claimFields(): { [Key in keyof LeaseClaim]: SQL.Aliased<string> } {
    return {
      id: sql<string>`${this.columns.id}`.as('claim_id'),
      leaseOwner: sql<string>`${this.columns.owner}`.as('claim_owner'),
      leaseToken: sql<string>`${this.columns.expiresAt}::text`.as('claim_token'),
    };
  }

  /** Rows nobody holds: never claimed, released, or whose lease ran out. */
  #free(): SQL {
    return or(isNull(this.columns.owner), lte(this.columns.expiresAt, dbNow()))!;
  }

  /**
   * Leases to `owner`, for `leaseMs`, up to `limit` rows that are due and free. `SKIP LOCKED`
   * lets several workers claim at once without waiting on each other or taking the same row.
   * Returns the statement, for the caller to choose what it reads back (`.returning()`), or
   * to join the claimed rows with others in one statement (as a CTE).
   */
  claim(db: DbOrTx, request: ClaimRequest<TTable>) {
    const claimable = db
      .select({ id: this.columns.id })
      // Widened: drizzle's check for subqueries without `returning` cannot see through a generic table.
      .from(this.table as PgTable)
      .where(and(request.due, this.#free()))
      .orderBy(request.orderBy)
      .limit(request.limit)
      .for('update', { skipLocked: true });
    const lease = { [this.#ownerKey]: request.owner, [this.#expiresAtKey]: dbNowPlus(request.leaseMs) };
    return db
      .update(this.table)
      .set({ ...request.set, ...lease } as PgUpdateSetSource<TTable>)
      .where(inArray(this.columns.id, claimable));
  }

  /**
   * Extends the lease of row `id` to `leaseMs` from now while `owner` holds it (and `condition`
   * holds). Fenced by the owner, not by a claim's token: each renewal moves the expiry, and
   * renewals of one holder that overlap must not refuse each other. False when the lease is
   * no longer `owner`'s (taken over, released or cleared): its work must stop.
   */
  async renew(db: DbOrTx, id: string, owner: string, leaseMs: number, condition?: SQL): Promise<boolean> {
    const renewed = await db
      .update(this.table)
      .set({ [this.#expiresAtKey]: dbNowPlus(leaseMs) } as PgUpdateSetSource<TTable>)
      .where(and(eq(this.columns.id, id), eq(this.columns.owner, owner), condition))
      .returning({ id: this.columns.id });
    return renewed.length > 0;
  }

  /**
   * Gives up the leases of `claims`, writing `changes.set` with the release, on the rows still
   * held under those very claims; the others are left as they are. Returns the statement,
   * for the caller to read back what it needs.
   */
  release(db: DbOrTx, claims: readonly LeaseClaim[], changes: ReleaseChanges<TTable> = {}) {
    const released = { [this.#ownerKey]: null, [this.#expiresAtKey]: null };
    return db
      .update(this.table)
      .set({ ...released, ...changes.set } as PgUpdateSetSource<TTable>)
      .where(and(this.#heldUnder(claims), changes.where));
  }

  /**
   * The rows still held under one of `claims`. The claims travel as three arrays paired by
   * position, so the statement is the same for any number of them (one plan, one prepared
   * statement) and a batch costs about what one claim does.
   */
  #heldUnder(claims: readonly LeaseClaim[]): SQL {
    const ids = arrayLiteral(claims.map((claim) => claim.id));
    const owners = arrayLiteral(claims.map((claim) => claim.leaseOwner));
    const tokens = arrayLiteral(claims.map((claim) => claim.leaseToken));
    const idType = sql.raw(this.columns.id.getSQLType());
    return sql`(${this.columns.id}, ${this.columns.owner}, ${this.columns.expiresAt}) in (
      select * from unnest(${ids}::${idType}[], ${owners}::text[], ${tokens}::timestamptz[]))`;
  }
}

/** The name `.set()` knows a column by: the table's property for it, not the SQL name. */
function propertyKey(table: PgTable, column: PgColumn): string {
  const entry = Object.entries(getTableColumns(table)).find(([, candidate]) => candidate === column);
  if (entry === undefined) throw new Error(`column ${column.name} is not a column of the leased table`);
  return entry[0];
}

/**
 * A PostgreSQL array literal of `values`, each quoted: postgres.js cannot send a JS array as
 * a parameter of unknown type, and the literal cast to the array type is one parameter.
 */
function arrayLiteral(values: readonly string[]): string {
  return `{${values.map((value) => `"${value.replace(/["\\]/g, '\\$&')}"`).join(',')}}`;
}
