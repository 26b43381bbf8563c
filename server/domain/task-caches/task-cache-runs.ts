import { and, asc, count, eq, sql } from 'drizzle-orm';
import type { Db, DbOrTx, Tx } from '../../../db/client';
import { taskCaches, tasks, taskSteps, type TaskCacheOutcome } from '../../../db/schema';
import type { CachedStep } from '../../agent/replay/cached-step';
import { dbNow } from '../db-clock';

/** Bounds of the cache (configuration `OPERATOR_TASK_CACHE_*`). */
export interface TaskCacheLimits {
  /** Steps one entry holds at most. */
  maxSteps: number;
  /** Bytes of one entry's steps as JSON at most. */
  maxBytes: number;
  /** Entries one organization holds at most. */
  maxEntries: number;
}

/** The part of a task the cache reads. */
export interface CachedTask {
  id: string;
  orgId: string;
  spaceId: string;
  prompt: string;
  cacheKey: string | null;
  cacheOutcome: TaskCacheOutcome | null;
}

async function entryOf(db: DbOrTx, spaceId: string, key: string) {
  const [row] = await db.select().from(taskCaches).where(and(eq(taskCaches.spaceId, spaceId), eq(taskCaches.key, key)));
  return row ?? null;
}

/** A task's outcome as submitted: `hit` when its Space holds an entry for the key with this very prompt. */
export async function outcomeAtSubmit(tx: DbOrTx, spaceId: string, key: string, prompt: string): Promise<TaskCacheOutcome> {
  const entry = await entryOf(tx, spaceId, key);
  return entry !== null && entry.prompt === prompt ? 'hit' : 'miss';
}

/**
 * What a run of a task with a cache key replays. A `hit` whose entry is gone or now holds
 * another prompt (deleted or replaced since the submit) becomes a `miss`; a `healed` task
 * (resumed after an escalation) goes on with the planner, the entry still its context.
 */
export async function cacheForRun(db: Db, task: CachedTask): Promise<{ entry: CachedStep[] | null; healing: boolean }> {
  if (task.cacheKey === null || task.cacheOutcome === 'miss') return { entry: null, healing: false };
  const entry = await entryOf(db, task.spaceId, task.cacheKey);
  const usable = entry !== null && entry.prompt === task.prompt ? (entry.steps as CachedStep[]) : null;
  if (task.cacheOutcome === 'healed') return { entry: usable, healing: true };
  if (usable === null) {
    await db.update(tasks).set({ cacheOutcome: 'miss' }).where(and(eq(tasks.id, task.id), eq(tasks.cacheOutcome, 'hit')));
    return { entry: null, healing: false };
  }
  return { entry: usable, healing: false };
}

/** The replay handed over to the planner: the task's outcome is `healed` from now on. */
export async function markHealed(db: Db, taskId: string): Promise<void> {
  await db.update(tasks).set({ cacheOutcome: 'healed' }).where(and(eq(tasks.id, taskId), eq(tasks.cacheOutcome, 'hit')));
}

/**
 * Stores a succeeded task's run as its key's entry, in the transaction that ends the task:
 * a `miss` writes (or replaces) the entry, a `healed` run replaces its steps, a `hit` counts
 * the use. The steps are the ones the run recorded (replayed ones as the entry had them).
 * Returns why nothing was stored, past a bound or with a step that has no stored form (a
 * target inside a frame), or null when stored. A failed task never comes here: its entry
 * stays as it was.
 */
export async function storeTaskCache(tx: Tx, task: CachedTask, limits: TaskCacheLimits): Promise<string | null> {
  if (task.cacheKey === null) return null;
  const rows = await tx.select({ type: taskSteps.type, cache: taskSteps.cache }).from(taskSteps).where(eq(taskSteps.taskId, task.id)).orderBy(asc(taskSteps.seq));
  const steps: CachedStep[] = [];
  for (const row of rows) {
    if (row.type === 'action' && row.cache === null) return 'An action of this run has no stored form (its element is inside a frame), so the run was not cached.';
    if (row.cache !== null) steps.push(row.cache as CachedStep);
  }
  if (steps.length > limits.maxSteps) return `The run took ${steps.length} steps; a cache entry holds at most ${limits.maxSteps}, so the run was not cached.`;
  const json = JSON.stringify(steps);
  const bytes = Buffer.byteLength(json);
  if (bytes > limits.maxBytes) return `The run's steps take ${bytes} bytes; a cache entry holds at most ${limits.maxBytes}, so the run was not cached.`;

  // One writer of an organization's new entries at a time, so the count holds under races.
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`task_caches:${task.orgId}`}, 0))`);
  if ((await entryOf(tx, task.spaceId, task.cacheKey)) === null) {
    const [held] = await tx.select({ entries: count() }).from(taskCaches).where(eq(taskCaches.orgId, task.orgId));
    if ((held?.entries ?? 0) >= limits.maxEntries) return `The organization holds ${limits.maxEntries} cache entries, its limit, so the run was not cached.`;
  }
  const outcome = task.cacheOutcome ?? 'miss';
  const used = outcome === 'miss' ? null : dbNow();
  await tx
    .insert(taskCaches)
    .values({ orgId: task.orgId, spaceId: task.spaceId, key: task.cacheKey, prompt: task.prompt, steps, bytes, hits: outcome === 'hit' ? 1 : 0, heals: outcome === 'healed' ? 1 : 0, createdAt: dbNow(), updatedAt: dbNow(), lastUsedAt: used })
    .onConflictDoUpdate({
      target: [taskCaches.spaceId, taskCaches.key],
      set: {
        prompt: task.prompt,
        steps,
        bytes,
        // A hit replayed the entry as it was: its steps are unchanged, and so is updated_at.
        updatedAt: outcome === 'hit' ? sql`${taskCaches.updatedAt}` : dbNow(),
        hits: sql`${taskCaches.hits} + ${outcome === 'hit' ? 1 : 0}`,
        heals: sql`${taskCaches.heals} + ${outcome === 'healed' ? 1 : 0}`,
        lastUsedAt: used ?? sql`${taskCaches.lastUsedAt}`,
      },
    });
  return null;
}
