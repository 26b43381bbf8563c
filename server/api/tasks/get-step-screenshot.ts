import { loadTaskForCaller } from '../../domain/tasks/load-task';
import type { Principal } from '../../domain/keys/principal';
import { resolveCaller } from '../../http/resolve-caller';
import { decodePathSegment } from '../../http/path-segment';
import type { RawRoute } from '../../http/raw-route';
import type { Services } from '../../services/services';
import { sendErrorResponse } from '../../trpc/send-error';
import { sendStepScreenshot, stepScreenshotObject } from './task-artifact-bytes';

/** The scope of a step's screenshot, on this route and the MCP tool `get_step_screenshot`. */
export const STEP_SCREENSHOT_SCOPES = ['operator:tasks:read'] as const;

/**
 * The stored JPEG of the caller's task's step `seq`: another organization's task is 404
 * task_not_found, a `seq` that is not a step number 400 (`param: "seq"`), a step without
 * one 404 screenshot_not_found. Shared with the MCP tool, so both decide alike.
 */
export async function findStepScreenshot(services: Services, principal: Principal, taskPublicId: string, seq: string): Promise<{ key: string; size: number }> {
  const task = await loadTaskForCaller(services.db, principal, taskPublicId);
  return stepScreenshotObject(services, task.id, seq);
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
        const principal = (await resolveCaller(services, req, res, { kind: 'api_key', scopes: STEP_SCREENSHOT_SCOPES })).principal;
        const task = await loadTaskForCaller(services.db, principal, decodePathSegment(params[0]!));
        await sendStepScreenshot(services, req, res, task.id, params[1]!);
      } catch (error) {
        sendErrorResponse(services.log, res, requestId, error);
      }
    },
  };
}
