import type { DbOrTx } from '../../../db/client';
import { SingleFlight } from '../single-flight';
import { getTaskIfTerminal } from './load-task';
import type { Task } from './task-resource';
import type { TaskChange, TaskChannel } from '../channels/task-channel';
import { stepsAfter, v1StepScreenshotUrls, type TaskStep } from './task-steps';

const STEP_BATCH = 500;

/** One reader of a task's steps: an event stream. */
export interface StepReader {
  /** Steps after the ones this reader already has, in seq order, without gaps. */
  steps(steps: TaskStep[]): void;
  /** The task is terminal and every step was handed over before this. */
  done(task: Task): void;
  /** Reading failed; the reader ends. */
  failed(error: unknown): void;
}

interface Subscription {
  reader: StepReader;
  /** The highest seq this reader has. */
  lastSeq: number;
}

/**
 * The steps of the tasks being streamed from this process, read once for all the streams
 * of a task: on each change notification of a task, one query reads the steps after the
 * furthest-behind stream's last seq and every stream gets those it lacks, so a step costs
 * one query (two when the status may have changed) whether 1 or 500 streams watch the
 * task, and the database pool is never flooded by a popular task's readers.
 */
export class TaskStepFeeds {
  readonly #feeds = new Map<string, TaskFeed>();

  constructor(
    private readonly db: DbOrTx,
    private readonly channel: TaskChannel,
    /** OPERATOR_PUBLIC_URL, for the steps' `screenshot_url`. */
    private readonly publicUrl: string,
  ) {}

  /**
   * Hands `reader` every step of the task with seq above `afterSeq`, then those recorded
   * later, then `done` when the task is terminal. Returns the unsubscribe function.
   */
  subscribe(taskId: string, afterSeq: number, reader: StepReader): () => void {
    let feed = this.#feeds.get(taskId);
    if (feed === undefined) {
      const created = new TaskFeed(this.db, this.publicUrl, taskId, () => {
        stopListening();
        if (this.#feeds.get(taskId) === created) this.#feeds.delete(taskId);
      });
      // Listening before the first read, so no step committed after that read is missed.
      const stopListening = this.channel.subscribe(taskId, (change) => created.pump(change));
      this.#feeds.set(taskId, created);
      feed = created;
    }
    return feed.add(reader, afterSeq);
  }
}

/** The shared reader of one task's steps. */
class TaskFeed {
  readonly #subscriptions = new Set<Subscription>();
  // One pass at a time per task; notifications during a pass make one more.
  readonly #passes = new SingleFlight(() => this.#pass(), (error) => this.#fail(error));
  /** The readers the pass in progress serves. */
  #audience: Subscription[] = [];
  #checkStatus = false;

  constructor(
    private readonly db: DbOrTx,
    private readonly publicUrl: string,
    private readonly taskId: string,
    private readonly onEmpty: () => void,
  ) {}

  add(reader: StepReader, afterSeq: number): () => void {
    const subscription: Subscription = { reader, lastSeq: afterSeq };
    this.#subscriptions.add(subscription);
    // A new reader needs its backlog and the status, whatever the others have.
    this.pump('reconnected');
    return () => {
      if (!this.#subscriptions.delete(subscription)) return;
      if (this.#subscriptions.size === 0) this.onEmpty();
    };
  }

  /**
   * Reads and hands out what changed. The status is read only when it may have changed (a
   * new reader, a `state` notification, a reconnect), not on every step.
   */
  pump(change: TaskChange): void {
    if (change !== 'step') this.#checkStatus = true;
    this.#passes.wake();
  }

  async #pass(): Promise<void> {
    const readStatus = this.#checkStatus;
    this.#checkStatus = false;
    // Readers that arrive during this pass wait for the next one (they wake it): `done`
    // must only reach a reader that got every step of this pass.
    const audience = (this.#audience = [...this.#subscriptions]);
    if (audience.length === 0) return;
    // The status is read before the steps: a task seen terminal has all its steps
    // committed, so the steps read next are complete before `done` goes out.
    const terminal = readStatus ? await getTaskIfTerminal(this.db, this.taskId) : null;
    let from = Math.min(...audience.map((subscription) => subscription.lastSeq));
    for (;;) {
      const steps = await stepsAfter(this.db, v1StepScreenshotUrls(this.publicUrl), this.taskId, from, STEP_BATCH);
      for (const subscription of audience) this.#handOver(subscription, steps);
      if (steps.length < STEP_BATCH) break;
      from = steps.at(-1)!.seq;
    }
    if (terminal !== null) for (const subscription of audience) if (this.#subscriptions.has(subscription)) subscription.reader.done(terminal);
  }

  /** A pass failed: its readers end; readers that came during it get the next pass. */
  #fail(error: unknown): void {
    for (const subscription of this.#audience) if (this.#subscriptions.has(subscription)) subscription.reader.failed(error);
  }

  #handOver(subscription: Subscription, steps: TaskStep[]): void {
    if (!this.#subscriptions.has(subscription)) return;
    const missing = steps.filter((step) => step.seq > subscription.lastSeq);
    if (missing.length === 0) return;
    subscription.lastSeq = missing.at(-1)!.seq;
    subscription.reader.steps(missing);
  }
}
