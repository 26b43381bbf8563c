import { loadTaskForCaller } from '../../domain/tasks/load-task';
import { rawEntryPoint } from '../entry-point';
import { recordingOperation } from '../recording-openapi';
import { sendTaskRecording } from './task-artifact-bytes';

/** GET /v1/tasks/{id}/recording: the video of the task's latest run (MP4), with `Range`. */
export const getTaskRecording = rawEntryPoint({
  method: 'GET',
  path: '/tasks/{id}/recording',
  caller: { kind: 'api_key', scopes: ['operator:tasks:read'] },
  openapi: recordingOperation({
    operationId: 'getTaskRecording',
    summary: "Download the video of a task's latest run (MP4, H.264)",
    description: '404 recording_not_found until a run of the task finished recording (the recording is stored before the task ends).',
    tags: ['tasks'],
    idPrefix: 'task',
    notFound: 'task_not_found',
  }),
  async handle({ req, res, params, caller, services }) {
    const task = await loadTaskForCaller(services.db, caller.principal, params.id!);
    await sendTaskRecording(services, req, res, task.id);
  },
});
