import { loadTaskForCaller } from '../../domain/tasks/load-task';
import { authorizeRequest } from '../../http/authorize';
import { decodePathSegment } from '../../http/path-segment';
import type { RawRoute } from '../../http/raw-route';
import type { Services } from '../../services/services';
import { sendErrorResponse } from '../../trpc/send-error';
import { sendStepScreenshot } from './task-artifact-bytes';

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
        await sendStepScreenshot(services, req, res, task.id, params[1]!);
      } catch (error) {
        sendErrorResponse(services.log, res, requestId, error);
      }
    },
  };
}
