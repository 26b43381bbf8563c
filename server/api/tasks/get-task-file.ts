import { ApiError } from '../../core/errors';
import { attachmentDisposition, loadTaskFileForCaller } from '../../domain/files/task-files';
import { resolveCaller } from '../../http/resolve-caller';
import { decodePathSegment } from '../../http/path-segment';
import type { RawRoute } from '../../http/raw-route';
import { sendObject } from '../../http/send-object';
import type { Services } from '../../services/services';
import { sendErrorResponse } from '../../trpc/send-error';

/**
 * GET /v1/tasks/{id}/files/{file_id}: the bytes of a file the task downloaded, as an
 * attachment (never rendered by a browser), with `Range`. Raw, not tRPC: the body is bytes.
 */
export function taskFileRoute(services: Services): RawRoute {
  return {
    method: 'GET',
    pattern: /^\/tasks\/([^/]+)\/files\/([^/]+)\/?$/,
    template: '/tasks/{id}/files/{file_id}',
    async handle(req, res, { requestId, params }) {
      try {
        const principal = (await resolveCaller(services, req, res, { kind: 'api_key', scopes: ['operator:tasks:read'] })).principal;
        const file = await loadTaskFileForCaller(services.db, principal, decodePathSegment(params[0]!), decodePathSegment(params[1]!));
        const sent = await sendObject(services.store, req, res, {
          key: file.objectKey,
          size: file.sizeBytes,
          contentType: file.contentType,
          contentDisposition: attachmentDisposition(file.name),
        });
        if (!sent) throw new ApiError('file_not_found');
      } catch (error) {
        sendErrorResponse(services.log, res, requestId, error);
      }
    },
  };
}
