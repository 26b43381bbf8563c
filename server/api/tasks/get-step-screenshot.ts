import { ApiError } from '../../core/errors';
import { loadTaskForCaller } from '../../domain/tasks/load-task';
import { stepScreenshot } from '../../domain/tasks/task-steps';
import type { Principal } from '../../domain/keys/principal';
import { authorizeRequest } from '../../http/authorize';
import { decodePathSegment } from '../../http/path-segment';
import type { RawRoute } from '../../http/raw-route';
import { sendObject } from '../../http/send-object';
import type { Services } from '../../services/services';
import { sendErrorResponse } from '../../trpc/send-error';

const SEQ = /^\d{1,9}$/;

/** The scope of a step's screenshot, on this route and the MCP tool `get_step_screenshot`. */
export const STEP_SCREENSHOT_SCOPES = ['operator:tasks:read'] as const;

/**
 * The stored JPEG of the caller's task's step `seq`: another organization's task is 404
 * task_not_found, a `seq` that is not a step number 400 (`param: "seq"`), a step without
 * one 404 screenshot_not_found. Shared with the MCP tool, so both decide alike.
 */
export async function findStepScreenshot(services: Services, principal: Principal, taskPublicId: string, seq: string): Promise<{ key: string; size: number }> {
  const task = await loadTaskForCaller(services.db, principal, taskPublicId);
  if (!SEQ.test(seq)) throw new ApiError('invalid_request', { param: 'seq', message: 'seq must be a step number.' });
  const key = await stepScreenshot(services.db, task.id, Number(seq));
  const stored = key === null ? null : await services.store.head(key);
  if (key === null || stored === null) throw new ApiError('screenshot_not_found');
  return { key, size: stored.size };
}

/**
 * GET /v1/tasks/{id}/steps/{seq}/screenshot: the JPEG of the page after the step. Raw,
 * not tRPC: the body is an image (artifacts-openapi.ts documents it).
 */
export function stepScreenshotRoute(services: Services): RawRoute {
  return {
    method: 'GET',
    pattern: /^\/tasks\/([^/]+)\/steps\/([^/]+)\/screenshot\/?$/,
    template: '/tasks/{id}/steps/{seq}/screenshot',
    async handle(req, res, { requestId, params }) {
      try {
        const principal = await authorizeRequest(services, req, res, STEP_SCREENSHOT_SCOPES);
        const { key, size } = await findStepScreenshot(services, principal, decodePathSegment(params[0]!), params[1]!);
        if (!(await sendObject(services.store, req, res, { key, size, contentType: 'image/jpeg' }))) throw new ApiError('screenshot_not_found');
      } catch (error) {
        sendErrorResponse(services.log, res, requestId, error);
      }
    },
  };
}
