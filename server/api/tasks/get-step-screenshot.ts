import { ApiError } from '../../core/errors';
import { loadTaskForCaller } from '../../domain/tasks/load-task';
import { stepScreenshot } from '../../domain/tasks/task-steps';
import { authorizeRequest } from '../../http/authorize';
import { decodePathSegment } from '../../http/path-segment';
import type { RawRoute } from '../../http/raw-route';
import { sendObject } from '../../http/send-object';
import type { Services } from '../../services/services';
import { sendErrorResponse } from '../../trpc/send-error';

const SEQ = /^\d{1,9}$/;

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
        const principal = await authorizeRequest(services, req, res, ['operator:tasks:read']);
        const task = await loadTaskForCaller(services.db, principal, decodePathSegment(params[0]!));
        const seq = params[1]!;
        if (!SEQ.test(seq)) throw new ApiError('invalid_request', { param: 'seq', message: 'seq must be a step number.' });
        const key = await stepScreenshot(services.db, task.id, Number(seq));
        const stored = key === null ? null : await services.store.head(key);
        if (key === null || stored === null) throw new ApiError('screenshot_not_found');
        if (!(await sendObject(services.store, req, res, { key, size: stored.size, contentType: 'image/jpeg' }))) throw new ApiError('screenshot_not_found');
      } catch (error) {
        sendErrorResponse(services.log, res, requestId, error);
      }
    },
  };
}
