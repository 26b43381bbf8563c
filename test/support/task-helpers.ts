import { expect } from 'vitest';
import type { Db } from '../../db/client';
import { devices, tasks, taskSteps } from '../../db/schema';
import { asc, eq, inArray, isNotNull } from 'drizzle-orm';
import { parsePublicId } from '../../server/domain/ids';
import type { ApiCall } from './http';

const TERMINAL = ['succeeded', 'failed', 'canceled'];

/** Polls GET /v1/tasks/{id} until the task is terminal (or parked), within `timeoutMs`. */
export async function waitForTaskEnd(api: ApiCall, taskId: string, timeoutMs = 45_000, until: string[] = TERMINAL): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await api('GET', `/v1/tasks/${taskId}`);
    expect(response.status).toBe(200);
    if (until.includes(response.body.status)) return response.body;
    // A task that ended otherwise says why (its result) in the failure.
    if (Date.now() > deadline) throw new Error(`task ${taskId} still ${response.body.status} after ${timeoutMs} ms: ${JSON.stringify(response.body.result)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** One server-sent event as parsed from a text/event-stream body. */
export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

export function parseSse(text: string): SseFrame[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const frame: SseFrame = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) frame.comment = line.slice(1).trim();
        const match = /^(id|event|data): (.*)$/.exec(line);
        if (match) frame[match[1] as 'id' | 'event' | 'data'] = match[2]!;
      }
      return frame;
    });
}

/** Reads a stream to its end (the server ends it after `done`). */
export async function readStream(url: string, key: string, headers: Record<string, string> = {}): Promise<{ status: number; contentType: string | null; frames: SseFrame[]; body: string }> {
  const response = await fetch(url, { headers: { Authorization: `Bearer ${key}`, ...headers } });
  const body = await response.text();
  return { status: response.status, contentType: response.headers.get('content-type'), frames: parseSse(body), body };
}

/** The invariant: no device's slot points at a task that is finished. */
export async function devicesHoldingFinishedTasks(db: Db): Promise<string[]> {
  const held = await db.select({ id: devices.id, taskId: devices.currentTaskId }).from(devices).where(isNotNull(devices.currentTaskId));
  if (held.length === 0) return [];
  const rows = await db
    .select({ id: tasks.id, status: tasks.status })
    .from(tasks)
    .where(inArray(tasks.id, held.map((row) => row.taskId!)));
  const live = new Set(rows.filter((row) => !TERMINAL.includes(row.status)).map((row) => row.id));
  return held.filter((row) => !live.has(row.taskId!)).map((row) => row.id);
}

/** The text chunks of a streaming response body, as they arrive. */
export async function* textChunks(response: Response): AsyncGenerator<string> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    yield decoder.decode(value, { stream: true });
  }
}

/** The host a device's browser runs on (devices.host_id), read from the database; `deviceId` as the API names it. */
export async function deviceHostOf(db: Db, deviceId: string): Promise<string | null> {
  const [row] = await db.select({ hostId: devices.hostId }).from(devices).where(eq(devices.id, parsePublicId('device', deviceId)!));
  return row?.hostId ?? null;
}

/** The actions of a task's steps in order (a step without one as ''), read from the database; `taskId` as the API names it. */
export async function stepActionsOf(db: Db, taskId: string): Promise<string[]> {
  const rows = await db.select({ action: taskSteps.action }).from(taskSteps).where(eq(taskSteps.taskId, parsePublicId('task', taskId)!)).orderBy(asc(taskSteps.seq));
  return rows.map((row) => row.action ?? '');
}
