import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../core/errors';
import { latestReadyRecording } from '../domain/recordings/recording-rows';
import type { RecordingSubject } from '../../db/schema';
import { sendObject } from '../http/send-object';
import type { Services } from '../services/services';

/**
 * The video of the latest finished recording of a subject the caller may read (a task, a
 * live-view session, a CDP session), sent with Range; 404 recording_not_found while none is.
 * Shared by every recording route, /v1's and the console's.
 */
export async function sendLatestRecording(services: Services, req: IncomingMessage, res: ServerResponse, kind: RecordingSubject, subjectId: string): Promise<void> {
  const recording = await latestReadyRecording(services.db, kind, subjectId);
  if (recording === null || recording.sizeBytes === null) throw new ApiError('recording_not_found');
  const sent = await sendObject(services.store, req, res, { key: recording.objectKey, size: recording.sizeBytes, contentType: recording.contentType });
  if (!sent) throw new ApiError('recording_not_found');
}
