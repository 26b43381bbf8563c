import { and, asc, desc, eq, gt, max, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Db, DbOrTx, Tx } from '../../../db/client';
import { stepTypes, tasks, taskSteps } from '../../../db/schema';
import type { CachedStep } from '../../agent/replay/cached-step';
import type { NewStep } from '../../agent/step';
import { toPublicId } from '../ids';
import { iso } from '../time';
import { notifyTaskChange, taskChangeNotice } from '../channels/task-channel';
import { dbNow } from '../db-clock';
import { isUniqueViolation } from '../unique-violation';

/** A step as the event stream sends it (CONTRACT.md step payload). */
export const TaskStepSchema = z.object({
  seq: z.number().int(),
  task_id: z.string(),
  type: z.enum(stepTypes),
  action: z.string().nullable(),
  url: z.string().nullable(),
  title: z.string().nullable(),
  note: z.string().nullable(),
  /** Carried out from the task's cache entry, with no planner (docs/api.md "Task caches"). */
  replayed: z.boolean(),
  /**
   * Where this reader fetches the step's screenshot (StepScreenshotUrls): on /v1, GET
   * /v1/tasks/{id}/steps/{seq}/screenshot, absolute; null when the step has no screenshot.
   */
  screenshot_url: z.string().nullable(),
  created_at: z.string(),
});
export type TaskStep = z.infer<typeof TaskStepSchema>;

type StepRow = typeof taskSteps.$inferSelect;

/** Where a step's screenshot is kept in the object store. */
export function stepScreenshotKey(taskId: string, seq: number): string {
  return `tasks/${taskId}/steps/${seq}.jpg`;
}

/**
 * Where a reader of steps fetches a step's screenshot, by the task's public id and the
 * step's seq: each door to the steps has its own byte route (an API key's /v1 route, the
 * console's cookie route), and null where the reader is not shown screenshots.
 */
export type StepScreenshotUrls = (taskPublicId: string, seq: number) => string | null;

/** The /v1 route, absolute: what the event stream, MCP and the API's readers are given. */
export function v1StepScreenshotUrls(publicUrl: string): StepScreenshotUrls {
  return (taskPublicId, seq) => `${publicUrl}/v1/tasks/${taskPublicId}/steps/${seq}/screenshot`;
}

/** No screenshot links (a reader who is shown the steps' text only). */
export const noStepScreenshots: StepScreenshotUrls = () => null;

function toStep(row: StepRow, screenshotUrls: StepScreenshotUrls): TaskStep {
  const taskPublicId = toPublicId('task', row.taskId);
  return {
    seq: row.seq,
    task_id: taskPublicId,
    type: row.type,
    action: row.action,
    url: row.url,
    title: row.title,
    note: row.note,
    replayed: row.replayed,
    screenshot_url: row.screenshotKey === null ? null : screenshotUrls(taskPublicId, row.seq),
    created_at: iso(row.createdAt),
  };
}

/** Steps with seq greater than `afterSeq`, in order, at most `limit`. */
export async function stepsAfter(db: DbOrTx, screenshotUrls: StepScreenshotUrls, taskId: string, afterSeq: number, limit: number): Promise<TaskStep[]> {
  const rows = await db
    .select()
    .from(taskSteps)
    .where(and(eq(taskSteps.taskId, taskId), gt(taskSteps.seq, afterSeq)))
    .orderBy(asc(taskSteps.seq))
    .limit(limit);
  return rows.map((row) => toStep(row, screenshotUrls));
}

/** The task's latest `limit` steps, in order (the timeline a person answering is shown). */
export async function latestSteps(db: DbOrTx, screenshotUrls: StepScreenshotUrls, taskId: string, limit: number): Promise<TaskStep[]> {
  const rows = await db.select().from(taskSteps).where(eq(taskSteps.taskId, taskId)).orderBy(desc(taskSteps.seq)).limit(limit);
  return rows.reverse().map((row) => toStep(row, screenshotUrls));
}

/** Every recorded step of a task, in order: the history a resumed run starts from. */
export async function taskHistory(db: DbOrTx, taskId: string): Promise<{ steps: NewStep[]; lastSeq: number }> {
  const rows = await db.select().from(taskSteps).where(eq(taskSteps.taskId, taskId)).orderBy(asc(taskSteps.seq));
  return {
    steps: rows.map((row) => ({ type: row.type, action: row.action, url: row.url, title: row.title, note: row.note, replayed: row.replayed, cache: row.cache as CachedStep | null })),
    lastSeq: rows.at(-1)?.seq ?? 0,
  };
}

/**
 * Appends step `seq` for a task only while `leaseOwner` still drives it (status
 * `running`, lease held): a run that was canceled, parked or taken over writes nothing.
 * Returns false when the fence refused the step. Each step commits on its own with its
 * notification, so streams see steps in seq order, without gaps. Retrying it is safe: a
 * step already recorded at `seq` by this same write counts as recorded.
 */
export async function appendStep(db: Db, taskId: string, orgId: string, seq: number, step: NewStep, leaseOwner: string, screenshotKey: string | null = null): Promise<boolean> {
  try {
    return await insertStep(db, taskId, orgId, seq, step, leaseOwner, screenshotKey);
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    // Step `seq` is there already. A retry after a commit whose answer was lost (the
    // database went away mid-reply) finds its own step: recorded, and counted once. Any
    // other step there was written by someone else: the run no longer drives the task.
    const [existing] = await db
      .select({ type: taskSteps.type, action: taskSteps.action, note: taskSteps.note })
      .from(taskSteps)
      .where(and(eq(taskSteps.taskId, taskId), eq(taskSteps.seq, seq)));
    return existing !== undefined && existing.type === step.type && existing.action === step.action && existing.note === step.note;
  }
}

async function insertStep(db: Db, taskId: string, orgId: string, seq: number, step: NewStep, leaseOwner: string, screenshotKey: string | null): Promise<boolean> {
  // The fence, the Task's `usage.steps` (and `replayed_steps`), the step and its
  // notification in one statement, so in one transaction of one round trip: the run's next
  // action waits for it, and on a busy host each round trip waits for a core. The counts
  // are kept on the row so reading a task needs no aggregate. The UPDATE waits for a
  // concurrent cancel or park to commit and then sees its status.
  const replayed = step.replayed === true;
  const cache = step.cache === undefined || step.cache === null ? null : JSON.stringify(step.cache);
  const notified = await db.execute(sql`
    with counted as (
      update ${tasks} set step_count = step_count + 1, replayed_steps = replayed_steps + ${replayed ? 1 : 0}
      where ${tasks.id} = ${taskId} and ${tasks.status} = 'running' and ${tasks.leaseOwner} = ${leaseOwner}
      returning 1
    ), inserted as (
      insert into ${taskSteps} (task_id, seq, org_id, type, action, url, title, note, screenshot_key, replayed, cache, created_at)
      select ${taskId}, ${seq}, ${orgId}, ${step.type}, ${step.action}, ${step.url}, ${step.title}, ${step.note}, ${screenshotKey}, ${replayed}, ${cache}::jsonb, now()
      from counted
      returning 1
    )
    select ${taskChangeNotice(taskId, 'step')} from inserted`);
  return notified.length > 0;
}

/**
 * A message step a person's answer (or its absence) adds to a parked task, in the
 * transaction that resumes it.
 */
export async function appendHumanStep(tx: Tx, task: { id: string; orgId: string }, action: 'human_answer' | 'human_no_answer', note: string | null): Promise<void> {
  await appendStepInTransaction(tx, task, { type: 'message', action, url: null, title: null, note });
}

/**
 * Appends a step written by the service rather than by a run (a person's answer, a run
 * handed over or cut off), in the transaction of the change it records: the next seq
 * after the task's last step.
 */
export async function appendStepInTransaction(tx: Tx, task: { id: string; orgId: string }, step: NewStep): Promise<void> {
  const [last] = await tx.select({ seq: max(taskSteps.seq) }).from(taskSteps).where(eq(taskSteps.taskId, task.id));
  await tx.insert(taskSteps).values({ taskId: task.id, seq: (last?.seq ?? 0) + 1, orgId: task.orgId, ...step, createdAt: dbNow() });
  await notifyTaskChange(tx, task.id, 'step');
}

/** The step of the task that points at `key` no longer has a screenshot (it could not be kept). */
export async function forgetStepScreenshot(db: Db, taskId: string, key: string): Promise<void> {
  await db.update(taskSteps).set({ screenshotKey: null }).where(and(eq(taskSteps.taskId, taskId), eq(taskSteps.screenshotKey, key)));
}

/** The object key of step `seq`'s screenshot; null when the step does not exist or has none. */
export async function stepScreenshot(db: DbOrTx, taskId: string, seq: number): Promise<string | null> {
  const [row] = await db
    .select({ key: taskSteps.screenshotKey })
    .from(taskSteps)
    .where(and(eq(taskSteps.taskId, taskId), eq(taskSteps.seq, seq)));
  return row?.key ?? null;
}
