import type { ApiErrorCode } from '../core/errors';
import { idParameter, type RawOperation } from './entry-point';

/** The OpenAPI entry of a recording route: an MP4 of one resource, 404 until one is stored. */
export function recordingOperation(operation: { operationId: string; summary: string; description: string; tags: string[]; idPrefix: string; notFound: ApiErrorCode }): RawOperation {
  const { idPrefix, notFound, ...described } = operation;
  return {
    ...described,
    parameters: [idParameter('id', idPrefix)],
    response: { kind: 'bytes', contentType: 'video/mp4', what: 'the recording' },
    errors: [notFound, 'recording_not_found'],
  };
}
