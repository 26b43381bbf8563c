import { loadTaskForCaller } from '../../domain/tasks/load-task';
import { resolveCaller } from '../../http/resolve-caller';
import { decodePathSegment } from '../../http/path-segment';
import type { RawRoute } from '../../http/raw-route';
import type { Services } from '../../services/services';
import { sendErrorResponse } from '../../trpc/send-error';
import { sendTaskRecording } from './task-artifact-bytes';

/**
 * GET /v1/tasks/{id}/recording: the video of the task's latest run (MP4), with `Range`.
 * Raw, not tRPC: the body is bytes (artifacts-openapi.ts documents it).
 */
export function taskRecordingRoute(services: Services): RawRoute {
  return {
    method: 'GET',
    pattern: /^\/tasks\/([^/]+)\/recording\/?$/,
    template: '/tasks/{id}/recording',
    async handle(req, res, { requestId, params }) {
      try {
        const principal = (await resolveCaller(services, req, res, { kind: 'api_key', scopes: ['operator:tasks:read'] })).principal;
        const task = await loadTaskForCaller(services.db, principal, decodePathSegment(params[0]!));
        await sendTaskRecording(services, req, res, task.id);
      } catch (error) {
        sendErrorResponse(services.log, res, requestId, error);
      }
    },
  };
}
