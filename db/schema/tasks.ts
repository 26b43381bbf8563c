import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { timestampMs } from './columns';
import { taskCacheOutcomes } from './task-caches';

export const taskStatuses = ['running', 'needs_human', 'succeeded', 'failed', 'canceled'] as const;
export type TaskStatus = (typeof taskStatuses)[number];
export const terminalTaskStatuses = ['succeeded', 'failed', 'canceled'] as const satisfies readonly TaskStatus[];

export const tasks = pgTable(
  'tasks',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    orgId: uuid('org_id').notNull(),
    spaceId: uuid('space_id').notNull(),
    deviceId: uuid('device_id').notNull(),
    status: text('status', { enum: taskStatuses }).notNull(),
    prompt: text('prompt').notNull(),
    allowedDomains: text('allowed_domains').array(),
    maxSteps: integer('max_steps'),
    /** The JSON Schema (draft 2020-12 subset) a successful result must match; null for none. */
    outputSchema: jsonb('output_schema'),
    /** Phrases or selectors of actions the agent must have a human confirm first; null for none. */
    confirmBefore: text('confirm_before').array(),
    /** `on_timeout` of the escalations the task opens: `fail` or `continue`. */
    escalationOnTimeout: text('escalation_on_timeout', { enum: ['fail', 'continue'] }).notNull().default('fail'),
    result: jsonb('result'),
    createdAt: timestampMs('created_at').notNull().defaultNow(),
    updatedAt: timestampMs('updated_at').notNull().defaultNow(),
    finishedAt: timestampMs('finished_at'),
    /** Overall timeout: the task fails with `timeout` past this instant. */
    deadlineAt: timestampMs('deadline_at').notNull(),
    /** Worker lease: the instance driving the task and until when its claim holds. */
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: timestampMs('lease_expires_at'),
    attempts: integer('attempts').notNull().default(0),
    /**
     * The incarnation of the browser the task's page was built in (set by its first run):
     * a run or an answer on another incarnation would continue on a page it did not build.
     */
    browserIncarnation: text('browser_incarnation'),
    /** The Task's `usage`, counted as the run goes (task-usage.ts): steps recorded, model requests and their tokens. */
    stepCount: integer('step_count').notNull().default(0),
    modelCalls: integer('model_calls').notNull().default(0),
    inputTokens: integer('input_tokens').notNull().default(0),
    outputTokens: integer('output_tokens').notNull().default(0),
    /** The task's `cache_key`, or null; with it, `cache_outcome` says whether the run replayed (docs/api.md "Task caches"). */
    cacheKey: text('cache_key'),
    cacheOutcome: text('cache_outcome', { enum: taskCacheOutcomes }),
    /** `usage.replayed_steps`: action steps carried out from the cache entry. */
    replayedSteps: integer('replayed_steps').notNull().default(0),
  },
  (table) => [
    // The slot as a constraint: at most one live task per device, whatever races.
    uniqueIndex('tasks_one_live_per_device')
      .on(table.deviceId)
      .where(sql`${table.status} in ('running', 'needs_human')`),
    index('tasks_device_page_idx').on(table.deviceId, table.createdAt.desc(), table.id.desc()),
    index('tasks_claim_idx')
      .on(table.leaseExpiresAt)
      .where(sql`${table.status} = 'running'`),
    index('tasks_org_created_idx').on(table.orgId, table.createdAt),
  ],
);

export const stepTypes = ['action', 'observation', 'message', 'correction'] as const;

export const taskSteps = pgTable(
  'task_steps',
  {
    taskId: uuid('task_id').notNull(),
    seq: integer('seq').notNull(),
    orgId: uuid('org_id').notNull(),
    type: text('type', { enum: stepTypes }).notNull(),
    action: text('action'),
    url: text('url'),
    title: text('title'),
    note: text('note'),
    /** The JPEG of the page after the step, in the object store; null when none was taken (or it expired). */
    screenshotKey: text('screenshot_key'),
    /** Carried out from the task's cache entry (the payload's `replayed`). */
    replayed: boolean('replayed').notNull().default(false),
    /** The decision as a cache entry stores it (NewStep.cache); only for tasks with a cache key. */
    cache: jsonb('cache'),
    createdAt: timestampMs('created_at').notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.taskId, table.seq] }),
    index('task_steps_org_created_idx').on(table.orgId, table.createdAt),
    // The retention sweep finds expired screenshots by age.
    index('task_steps_screenshot_created_idx')
      .on(table.createdAt)
      .where(sql`${table.screenshotKey} is not null`),
  ],
);
