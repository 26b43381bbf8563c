import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RecordingSubject } from '../../db/schema';
import { ApiError, type ApiErrorCode } from '../core/errors';
import type { Principal } from '../domain/keys/principal';
import type { Scope } from '../domain/keys/scopes';
import { idParameter, rawEntryPoint, type EntryServices } from './entry-point';
import { sendObject } from '../http/send-object';
import { storedRecording } from '../domain/recordings/stored-recording';
import type { Services } from '../services/services';

/**
 * A recording route: GET the MP4 of the latest finished recording of one resource the
 * caller's key may read (`load`: its row id, or the resource's 404), with Range; 404
 * recording_not_found while none is stored.
 */
export function recordingEntryPoint(route: {
  path: string;
  scopes: readonly Scope[];
  subject: RecordingSubject;
  /** The resource's row id, and whether it has stopped recording (a recording being stored is then waited for). */
  load: (services: EntryServices, principal: Principal, publicId: string) => Promise<{ id: string; stoppedRecording?: boolean }>;
  openapi: { operationId: string; summary: string; description: string; tags: string[]; idPrefix: string; notFound: ApiErrorCode };
}) {
  const { idPrefix, notFound, ...described } = route.openapi;
  return rawEntryPoint({
    method: 'GET',
    path: route.path,
    caller: { kind: 'api_key', scopes: route.scopes },
    openapi: { ...described, parameters: [idParameter('id', idPrefix)], response: { kind: 'bytes', contentType: 'video/mp4', what: 'the recording' }, errors: [notFound, 'recording_not_found'] },
    async handle({ req, res, params, caller, services }) {
      const resource = await route.load(services, caller.principal, params.id!);
      await sendLatestRecording(services, req, res, route.subject, resource);
    },
  });
}

/**
 * The video of the latest finished recording of a subject the caller may read (a task, a
 * live-view session, a CDP session), sent with Range; 404 recording_not_found while none is
 * (stored-recording.ts: one a stopped subject is still storing is waited for). Shared by
 * every recording route, /v1's and the console's.
 */
export async function sendLatestRecording(services: Services, req: IncomingMessage, res: ServerResponse, kind: RecordingSubject, subject: { id: string; stoppedRecording?: boolean }): Promise<void> {
  const recording = await storedRecording(services.db, kind, subject.id, subject.stoppedRecording ?? false);
  if (recording === null || recording.sizeBytes === null) throw new ApiError('recording_not_found');
  const sent = await sendObject(services.store, req, res, { key: recording.objectKey, size: recording.sizeBytes, contentType: recording.contentType });
  if (!sent) throw new ApiError('recording_not_found');
}
