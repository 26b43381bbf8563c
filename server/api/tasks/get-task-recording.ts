import { loadTaskForCaller } from '../../domain/tasks/load-task';
import { taskStoppedRecording } from '../../domain/tasks/task-resource';
import { recordingEntryPoint } from '../recording-route';

/** GET /v1/tasks/{id}/recording: the video of the task's latest run. */
export const getTaskRecording = recordingEntryPoint({
  path: '/tasks/{id}/recording',
  scopes: ['operator:tasks:read'],
  subject: 'task',
  load: async (services, principal, id) => {
    const task = await loadTaskForCaller(services.db, principal, id);
    return { id: task.id, stoppedRecording: taskStoppedRecording(task) };
  },
  openapi: {
    operationId: 'getTaskRecording',
    summary: "Download the video of a task's latest run (MP4, H.264)",
    description: "404 recording_not_found until a run of the task finished recording. A run's video is stored just after the task's end is written: asked for meanwhile, it is waited for.",
    tags: ['tasks'],
    idPrefix: 'task',
    notFound: 'task_not_found',
  },
});
