import { ApiError } from '../../core/errors';
import { attachmentDisposition, loadTaskFileForCaller } from '../../domain/files/task-files';
import { sendObject } from '../../http/send-object';
import { idParameter, rawEntryPoint } from '../entry-point';

/**
 * GET /v1/tasks/{id}/files/{file_id}: the bytes of a file the task downloaded, as an
 * attachment (never rendered by a browser), with `Range`.
 */
export const getTaskFile = rawEntryPoint({
  method: 'GET',
  path: '/tasks/{id}/files/{file_id}',
  caller: { kind: 'api_key', scopes: ['operator:tasks:read'] },
  openapi: {
    operationId: 'getTaskFile',
    summary: 'Download a file the task downloaded',
    description: 'Sent as an attachment (Content-Disposition) with the content type of its name; its sha256 is in the list.',
    tags: ['tasks'],
    parameters: [idParameter('id', 'task'), idParameter('file_id', 'file')],
    response: { kind: 'bytes', contentType: 'application/octet-stream', what: 'the file' },
    errors: ['task_not_found', 'file_not_found'],
  },
  async handle({ req, res, params, caller, services }) {
    const file = await loadTaskFileForCaller(services.db, caller.principal, params.id!, params.file_id!);
    const sent = await sendObject(services.store, req, res, { key: file.objectKey, size: file.sizeBytes, contentType: file.contentType, contentDisposition: attachmentDisposition(file.name) });
    if (!sent) throw new ApiError('file_not_found');
  },
});
