import { loadTaskForCaller } from '../../domain/tasks/load-task';
import type { Principal } from '../../domain/keys/principal';
import type { Services } from '../../services/services';
import { idParameter, rawEntryPoint } from '../entry-point';
import { sendStepScreenshot, stepScreenshotObject } from './task-artifact-bytes';

/**
 * The stored JPEG of the caller's task's step `seq`: another organization's task is 404
 * task_not_found, a `seq` that is not a step number 400 (`param: "seq"`), a step without
 * one 404 screenshot_not_found. The route's and the MCP tool `get_step_screenshot`'s.
 */
export async function findStepScreenshot(services: Services, principal: Principal, taskPublicId: string, seq: string): Promise<{ key: string; size: number }> {
  const task = await loadTaskForCaller(services.db, principal, taskPublicId);
  return stepScreenshotObject(services, task.id, seq);
}

/** GET /v1/tasks/{id}/steps/{seq}/screenshot: the JPEG of the page after the step. The MCP tool resolves its caller by this entry's rule. */
export const getStepScreenshot = rawEntryPoint({
  method: 'GET',
  path: '/tasks/{id}/steps/{seq}/screenshot',
  caller: { kind: 'api_key', scopes: ['operator:tasks:read'] },
  openapi: {
    operationId: 'getStepScreenshot',
    summary: 'Download the JPEG of the page after a step',
    description: "A step's `screenshot_url` points here; 404 screenshot_not_found when the step has none.",
    tags: ['tasks'],
    parameters: [idParameter('id', 'task'), { name: 'seq', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }],
    response: { kind: 'bytes', contentType: 'image/jpeg', what: 'the screenshot' },
    errors: ['task_not_found', 'screenshot_not_found', 'invalid_request'],
  },
  async handle({ req, res, params, caller, services }) {
    const task = await loadTaskForCaller(services.db, caller.principal, params.id!);
    await sendStepScreenshot(services, req, res, task.id, params.seq!);
  },
});
