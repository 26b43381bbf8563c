import { index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { timestampMs } from './columns';

export const taskCacheOutcomes = ['miss', 'hit', 'healed'] as const;
export type TaskCacheOutcome = (typeof taskCacheOutcomes)[number];

/**
 * A task cache entry (`task_cache`): the steps of a successful run, stored under the
 * task's `cache_key` in its device's Space, replayed by later tasks with the same key
 * and prompt (server/agent/replay/, server/domain/task-caches/).
 */
export const taskCaches = pgTable(
  'task_caches',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    spaceId: uuid('space_id').notNull(),
    key: text('key').notNull(),
    /** The prompt of the run that recorded the steps; another prompt is a miss. */
    prompt: text('prompt').notNull(),
    /** CachedStep[] (server/agent/replay/cached-step.ts); secrets only as their placeholders. */
    steps: jsonb('steps').notNull(),
    /** Size of `steps` as JSON, bounded by OPERATOR_TASK_CACHE_MAX_BYTES. */
    bytes: integer('bytes').notNull(),
    hits: integer('hits').notNull().default(0),
    heals: integer('heals').notNull().default(0),
    createdAt: timestampMs('created_at').notNull().defaultNow(),
    updatedAt: timestampMs('updated_at').notNull().defaultNow(),
    lastUsedAt: timestampMs('last_used_at'),
  },
  (table) => [
    uniqueIndex('task_caches_space_key').on(table.spaceId, table.key),
    index('task_caches_page_idx').on(table.orgId, table.createdAt.desc(), table.id.desc()),
  ],
);
