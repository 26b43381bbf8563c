import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../../core/errors';
import { stepScreenshot } from '../../domain/tasks/task-steps';
import { sendObject } from '../../http/send-object';
import type { Services } from '../../services/services';
import { sendLatestRecording } from '../recording-route';

// A task's stored bytes, sent the one way (sendObject: Range, 206/416, private caching)
// for every door that reaches them: the /v1 routes (API key) and the console's
// (server/console/console-artifacts.ts, sign-in cookie). The caller has authenticated the
// request and resolved the task it may read; these only find and send the object.

const SEQ = /^\d{1,9}$/;

/** Step `seq` (as the path gave it) of a task the caller may read: where its JPEG is stored, or 404 screenshot_not_found (400 for a seq that is no number). */
export async function stepScreenshotObject(services: Services, taskId: string, seq: string): Promise<{ key: string; size: number }> {
  if (!SEQ.test(seq)) throw new ApiError('invalid_request', { param: 'seq', message: 'seq must be a step number.' });
  const key = await stepScreenshot(services.db, taskId, Number(seq));
  const stored = key === null ? null : await services.store.head(key);
  if (key === null || stored === null) throw new ApiError('screenshot_not_found');
  return { key, size: stored.size };
}

/** Sends the JPEG of step `seq` of a task the caller may read (stepScreenshotObject's errors). */
export async function sendStepScreenshot(services: Services, req: IncomingMessage, res: ServerResponse, taskId: string, seq: string): Promise<void> {
  const { key, size } = await stepScreenshotObject(services, taskId, seq);
  if (!(await sendObject(services.store, req, res, { key, size, contentType: 'image/jpeg' }))) throw new ApiError('screenshot_not_found');
}

/** The video of the latest run of a task the caller may read, or 404 recording_not_found while none is finished. */
export function sendTaskRecording(services: Services, req: IncomingMessage, res: ServerResponse, taskId: string): Promise<void> {
  return sendLatestRecording(services, req, res, 'task', taskId);
}
