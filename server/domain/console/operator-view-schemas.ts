import { z } from 'zod';
import { DeviceSchema, DeviceStatusSchema } from '../devices/device-resource';
import { EscalationSchema } from '../escalations/escalation-resource';
import { TaskSchema, TaskStatusSchema } from '../tasks/task-resource';
import { TaskStepSchema } from '../tasks/task-steps';

// What the console shows operators (operator-views.ts), as its procedures declare it.

/** An organization of the preview with its Spaces; never its escalation signing secret. */
export const OrganizationViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  entitled: z.boolean(),
  max_devices: z.number().int().nullable(),
  max_device_seconds: z.number().int().nullable(),
  escalation_url: z.string().nullable(),
  created_at: z.string(),
  spaces: z.array(z.object({ id: z.string(), name: z.string() })),
});
export type OrganizationView = z.infer<typeof OrganizationViewSchema>;

/** An API key as listed; never its secret or the secret's hash. */
export const ApiKeyViewSchema = z.object({
  key_id: z.string(),
  env: z.enum(['live', 'test']),
  scopes: z.array(z.string()),
  space_ids: z.array(z.string()),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
});
export type ApiKeyView = z.infer<typeof ApiKeyViewSchema>;

/** A pending escalation on the operators' queue, with its organization's name. */
export const PendingEscalationSchema = EscalationSchema.extend({ org_id: z.string(), organization: z.string() });
export type PendingEscalation = z.infer<typeof PendingEscalationSchema>;

/** What the organizations list asks for: a search (name or id; empty: all) and a 1-based page. */
export const OrganizationSearchSchema = z.object({
  query: z.string().max(200).default(''),
  page: z.number().int().min(1).max(100_000).default(1),
  page_size: z.number().int().min(1).max(100).default(20),
});
export type OrganizationSearch = z.infer<typeof OrganizationSearchSchema>;

/** An organization as a row of the list: no Space names, their count and its live devices'. */
export const OrganizationSummarySchema = z.object({
  id: z.string(),
  name: z.string(),
  entitled: z.boolean(),
  escalation_url: z.string().nullable(),
  created_at: z.string(),
  spaces: z.number().int(),
  live_devices: z.number().int(),
});

export const OrganizationPageSchema = z.object({ data: z.array(OrganizationSummarySchema), total: z.number().int(), page: z.number().int(), page_size: z.number().int() });
export type OrganizationPage = z.infer<typeof OrganizationPageSchema>;

/** An organization with waiting escalations, for the inbox's filter. */
export const WaitingOrganizationSchema = z.object({ id: z.string(), name: z.string(), waiting: z.number().int() });
export type WaitingOrganization = z.infer<typeof WaitingOrganizationSchema>;

/** A device on its organization's page: the API's Device, its Space's name and what it is doing. */
export const OperatorDeviceSchema = DeviceSchema.extend({
  space_name: z.string(),
  current_task: z.object({ status: TaskStatusSchema, prompt: z.string() }).nullable(),
});
export type OperatorDevice = z.infer<typeof OperatorDeviceSchema>;

/** A task on its organization's page, with its device's name. */
export const OperatorTaskSchema = TaskSchema.extend({ device_name: z.string() });
export type OperatorTask = z.infer<typeof OperatorTaskSchema>;

/** A task's console page. */
export const OperatorTaskViewSchema = z.object({
  task: TaskSchema,
  organization: z.object({ id: z.string(), name: z.string() }),
  device: z.object({ id: z.string(), name: z.string(), status: DeviceStatusSchema }),
  steps: z.array(TaskStepSchema),
  escalations: z.array(EscalationSchema),
  /** The console's route to the video of the task's latest run; null while no run's recording is finished. */
  recording_url: z.string().nullable(),
});
export type OperatorTaskView = z.infer<typeof OperatorTaskViewSchema>;
