import { loadTaskForCaller } from '../../domain/tasks/load-task';
import { recordingEntryPoint } from '../recording-route';

/** GET /v1/tasks/{id}/recording: the video of the task's latest run. */
export const getTaskRecording = recordingEntryPoint({
  path: '/tasks/{id}/recording',
  scopes: ['operator:tasks:read'],
  subject: 'task',
  load: (services, principal, id) => loadTaskForCaller(services.db, principal, id),
  openapi: {
    operationId: 'getTaskRecording',
    summary: "Download the video of a task's latest run (MP4, H.264)",
    description: '404 recording_not_found until a run of the task finished recording (the recording is stored before the task ends).',
    tags: ['tasks'],
    idPrefix: 'task',
    notFound: 'task_not_found',
  },
});
