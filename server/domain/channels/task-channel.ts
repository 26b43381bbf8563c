import { sql as drizzleSql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../../../db/client';
import type { Notifications } from './notifications';

/** NOTIFY channel for task changes; the payload is `<change>:<task uuid>`. */
export const TASK_CHANNEL = 'operator_task_changed';

/**
 * `step`: a step was recorded. `state`: the task's status or lease changed (submitted,
 * ended, canceled, parked, resumed). `reconnected`: the listener connection was
 * (re)established, so notifications may have been missed and listeners re-read.
 */
export type TaskChange = 'step' | 'state' | 'reconnected';

/** Queues a notification; PostgreSQL delivers it when the caller's transaction commits. */
export async function notifyTaskChange(tx: DbOrTx, taskId: string, change: Exclude<TaskChange, 'reconnected'>): Promise<void> {
  await tx.execute(drizzleSql`select ${taskChangeNotice(taskId, change)}`);
}

/** The `pg_notify(...)` call of a task change, for a statement that notifies as part of its own work. */
export function taskChangeNotice(taskId: string, change: Exclude<TaskChange, 'reconnected'>): SQL {
  return drizzleSql`pg_notify(${TASK_CHANNEL}, ${`${change}:${taskId}`})`;
}

type Listener = (change: TaskChange, taskId: string) => void;

/**
 * Task changes fanned out to in-process subscribers: the event streams of a task and the
 * worker driving it. Notifications make new steps and cancels reach them at once, across
 * instances, without polling.
 */
export class TaskChannel {
  private readonly byTask = new Map<string, Set<Listener>>();
  private readonly everyTask = new Set<Listener>();
  private readonly unsubscribe: () => void;

  constructor(notifications: Notifications) {
    this.unsubscribe = notifications.subscribe(TASK_CHANNEL, {
      onNotify: (payload) => this.dispatch(payload),
      // Whatever was notified while the connection was down is lost: every subscriber re-reads.
      onReconnect: () => this.broadcast('reconnected'),
    });
  }

  /** Calls `listener` on every change of one task; returns the unsubscribe function. */
  subscribe(taskId: string, listener: (change: TaskChange) => void): () => void {
    const wrapped: Listener = (change) => listener(change);
    let listeners = this.byTask.get(taskId);
    if (listeners === undefined) this.byTask.set(taskId, (listeners = new Set()));
    listeners.add(wrapped);
    return () => {
      listeners.delete(wrapped);
      if (listeners.size === 0 && this.byTask.get(taskId) === listeners) this.byTask.delete(taskId);
    };
  }

  /** Calls `listener` on every change of any task (the worker's wake-up on submissions). */
  subscribeAll(listener: Listener): () => void {
    this.everyTask.add(listener);
    return () => this.everyTask.delete(listener);
  }

  close(): void {
    this.unsubscribe();
    this.byTask.clear();
    this.everyTask.clear();
  }

  private dispatch(payload: string): void {
    const separator = payload.indexOf(':');
    const change = payload.slice(0, separator);
    const taskId = payload.slice(separator + 1);
    if (change !== 'step' && change !== 'state') return;
    for (const listener of this.everyTask) listener(change, taskId);
    for (const listener of this.byTask.get(taskId) ?? []) listener(change, taskId);
  }

  private broadcast(change: TaskChange): void {
    for (const listener of this.everyTask) listener(change, '');
    for (const [taskId, listeners] of this.byTask) for (const listener of listeners) listener(change, taskId);
  }
}
