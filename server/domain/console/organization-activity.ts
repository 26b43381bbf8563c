import { and, asc, desc, eq, ne } from 'drizzle-orm';
import type { Db } from '../../../db/client';
import { devices, escalations, organizations, spaces, tasks } from '../../../db/schema';
import { ApiError } from '../../core/errors';
import { toDeviceResource } from '../devices/device-resource';
import { toEscalationResource } from '../escalations/escalation-resource';
import { isUuid, parsePublicId, toPublicId } from '../ids';
import { hasStoredRecording } from '../recordings/stored-recording';
import { taskStoppedRecording, toTaskResource, type TaskRow } from '../tasks/task-resource';
import { stepsAfter, type StepScreenshotUrls } from '../tasks/task-steps';
import type { OperatorDevice, OperatorTask, OperatorTaskView } from './operator-view-schemas';

// What an organization's page and a task's page show an operator: devices, recent tasks,
// one task with its steps. Read-only: changes go through the same operations as /v1.

/** The devices the console lists per organization, and the recent tasks it shows. */
const DEVICE_LIMIT = 100;
const RECENT_TASK_LIMIT = 20;
/** Steps a task page shows; the offline planner's default maximum is far below. */
const STEP_LIMIT = 500;

/** The organization's devices that are not terminated, newest first, with their Space's name and current task. */
export async function organizationDevices(db: Db, orgId: string): Promise<OperatorDevice[]> {
  if (!isUuid(orgId)) throw new ApiError('organization_not_found');
  const rows = await db
    .select({ device: devices, space: spaces.name, taskStatus: tasks.status, taskPrompt: tasks.prompt })
    .from(devices)
    .innerJoin(spaces, eq(spaces.id, devices.spaceId))
    .leftJoin(tasks, eq(tasks.id, devices.currentTaskId))
    .where(and(eq(devices.orgId, orgId), ne(devices.status, 'terminated')))
    .orderBy(desc(devices.createdAt), desc(devices.id))
    .limit(DEVICE_LIMIT);
  return rows.map((row) => ({
    ...toDeviceResource(row.device),
    space_name: row.space,
    current_task: row.device.currentTaskId === null || row.taskStatus === null ? null : { status: row.taskStatus, prompt: row.taskPrompt ?? '' },
  }));
}

/** The organization's latest tasks, newest first, with their device's name. */
export async function recentTasks(db: Db, orgId: string): Promise<OperatorTask[]> {
  if (!isUuid(orgId)) throw new ApiError('organization_not_found');
  const rows = await db
    .select({ task: tasks, device: devices.name })
    .from(tasks)
    .innerJoin(devices, eq(devices.id, tasks.deviceId))
    .where(eq(tasks.orgId, orgId))
    .orderBy(desc(tasks.createdAt), desc(tasks.id))
    .limit(RECENT_TASK_LIMIT);
  return rows.map((row) => ({ ...toTaskResource(row.task), device_name: row.device }));
}

/** Where the reader of a task view fetches its bytes (the console: its cookie routes). */
export interface TaskArtifactUrls {
  stepScreenshot: StepScreenshotUrls;
  /** The task's latest finished recording. */
  recording: (taskPublicId: string) => string;
}

/** A task of any organization (an operator reads them all); 404 task_not_found for a malformed or unknown id. */
export async function operatorTaskRow(db: Db, publicId: string): Promise<TaskRow> {
  const id = parsePublicId('task', publicId);
  const [row] = id === null ? [] : await db.select().from(tasks).where(eq(tasks.id, id));
  if (row === undefined) throw new ApiError('task_not_found');
  return row;
}

/**
 * A task of any organization, as its console page shows it: the task, its organization
 * and device, its steps in order, its escalations, and where its latest finished
 * recording is (null while there is none). 404 task_not_found for a
 * malformed or unknown id.
 */
export async function operatorTaskView(db: Db, urls: TaskArtifactUrls, publicId: string): Promise<OperatorTaskView> {
  const id = parsePublicId('task', publicId);
  const [row] =
    id === null
      ? []
      : await db
          .select({ task: tasks, organization: organizations.name, device: devices })
          .from(tasks)
          .innerJoin(organizations, eq(organizations.id, tasks.orgId))
          .innerJoin(devices, eq(devices.id, tasks.deviceId))
          .where(eq(tasks.id, id));
  if (row === undefined) throw new ApiError('task_not_found');
  const [steps, escalationRows, recording] = await Promise.all([
    stepsAfter(db, urls.stepScreenshot, row.task.id, 0, STEP_LIMIT),
    db.select().from(escalations).where(eq(escalations.taskId, row.task.id)).orderBy(asc(escalations.createdAt)),
    hasStoredRecording(db, 'task', row.task.id, taskStoppedRecording(row.task)),
  ]);
  return {
    task: toTaskResource(row.task),
    organization: { id: row.task.orgId, name: row.organization },
    device: { id: toDeviceResource(row.device).id, name: row.device.name, status: row.device.status },
    steps,
    escalations: escalationRows.map(toEscalationResource),
    recording_url: recording ? urls.recording(toPublicId('task', row.task.id)) : null,
  };
}
