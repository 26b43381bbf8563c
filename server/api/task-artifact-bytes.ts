import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../core/errors';
import { stepScreenshot } from '../domain/tasks/task-steps';
import { taskStoppedRecording, type TaskRow } from '../domain/tasks/task-resource';
import { sendObject } from '../http/send-object';
import type { Services } from '../services/services';
import { sendLatestRecording } from './recording-route';

// A task's stored bytes, sent the one way (sendObject: Range, 206/416, private caching)
// for every door that reaches them: the /v1 routes (API key) and the console's
// (server/console/console-artifacts.ts, sign-in cookie). The caller has authenticated the
// request and resolved the task it may read; these only find and send the object.

const SEQ = /^\d{1,9}$/;

// A step is written before its picture is stored (server/artifacts/step-screenshots.ts):
// usually a fraction of a second, at most a capture's timeout (5 s) when the recording had
// no frame. A step whose picture could not be kept stops naming it.
const PENDING_SCREENSHOT_WAIT_MS = 6_000;
const PENDING_SCREENSHOT_POLL_MS = 50;

/**
 * Step `seq` (as the path gave it) of a task the caller may read: where its JPEG is stored
 * (waited for while it is on its way), or 404 screenshot_not_found (400 for a seq that is no number).
 */
export async function stepScreenshotObject(services: Services, taskId: string, seq: string): Promise<{ key: string; size: number }> {
  if (!SEQ.test(seq)) throw new ApiError('invalid_request', { param: 'seq', message: 'seq must be a step number.' });
  const deadline = Date.now() + PENDING_SCREENSHOT_WAIT_MS;
  for (;;) {
    const key = await stepScreenshot(services.db, taskId, Number(seq));
    if (key === null) throw new ApiError('screenshot_not_found');
    const stored = await services.store.head(key);
    if (stored !== null) return { key, size: stored.size };
    if (Date.now() >= deadline) throw new ApiError('screenshot_not_found');
    await new Promise((resolve) => setTimeout(resolve, PENDING_SCREENSHOT_POLL_MS));
  }
}

/** Sends the JPEG of step `seq` of a task the caller may read (stepScreenshotObject's errors). */
export async function sendStepScreenshot(services: Services, req: IncomingMessage, res: ServerResponse, taskId: string, seq: string): Promise<void> {
  const { key, size } = await stepScreenshotObject(services, taskId, seq);
  if (!(await sendObject(services.store, req, res, { key, size, contentType: 'image/jpeg' }))) throw new ApiError('screenshot_not_found');
}

/** The video of the latest run of a task the caller may read, or 404 recording_not_found while none is finished. */
export function sendTaskRecording(services: Services, req: IncomingMessage, res: ServerResponse, task: TaskRow): Promise<void> {
  return sendLatestRecording(services, req, res, 'task', { id: task.id, stoppedRecording: taskStoppedRecording(task) });
}
