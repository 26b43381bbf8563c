import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { CreateDeviceBodySchema, type CreateDeviceBody } from '../domain/devices/create-device';
import { ListDevicesQuerySchema, type ListDevicesQuery } from '../domain/devices/list-devices';
import { ListEscalationsQuerySchema, type ListEscalationsQuery } from '../domain/escalations/list-escalations';
import { ResolveEscalationBodySchema, type ResolveEscalationBody } from '../domain/escalations/resolve-escalation';
import { SubmitTaskBodySchema, type SubmitTaskBody } from '../domain/tasks/task-input';
import type { TaskStep } from '../domain/tasks/task-steps';

// The MCP tools, one definition for both transports: over Streamable HTTP on the service
// (each call goes through the same tRPC procedure as its REST route, http-backend.ts) and
// over stdio (a client of the REST API through the SDK, stdio.ts). Arguments use the REST
// field names and the same zod schemas as the routes.

/** A list query as a tool argument: `limit` a plain integer (the REST query coerces text). */
const pageArguments = { limit: z.number().int().min(1).max(100).optional(), cursor: z.string().max(512).optional() };

/** How long `run_task` follows a task before answering with it still running. */
export const RUN_TASK_DEFAULT_WAIT_SECS = 300;

export interface PageArguments {
  limit?: number;
  cursor?: string;
}

/** What the tools need of the service; each method is one REST route. */
export interface OperatorBackend {
  createDevice(body: CreateDeviceBody): Promise<unknown>;
  listDevices(query: PageArguments & Omit<ListDevicesQuery, 'limit' | 'cursor'>): Promise<unknown>;
  getDevice(id: string): Promise<unknown>;
  sleepDevice(id: string): Promise<unknown>;
  wakeDevice(id: string): Promise<unknown>;
  deleteDevice(id: string): Promise<unknown>;
  getTask(id: string): Promise<unknown>;
  /** GET /v1/tasks/{id}/steps/{seq}/screenshot: the JPEG's bytes. */
  stepScreenshot(taskId: string, seq: number): Promise<Uint8Array>;
  cancelTask(id: string): Promise<unknown>;
  /**
   * Submits a task and hands over its steps as they happen until it is terminal (then
   * `terminal` is the task) or the signal aborts (`terminal` null).
   */
  runTask(deviceId: string, body: SubmitTaskBody, onStep: (step: TaskStep) => void, signal: AbortSignal): Promise<{ taskId: string; terminal: unknown }>;
  listEscalations(query: PageArguments & Omit<ListEscalationsQuery, 'limit' | 'cursor'>): Promise<unknown>;
  resolveEscalation(id: string, token: string, body: ResolveEscalationBody): Promise<unknown>;
  /**
   * The CONTRACT.md error body of an error the service answered (with the request id of
   * the call that failed, when known), or null for anything else.
   */
  errorBody(error: unknown): ToolErrorBody | null;
}

export interface ToolErrorBody {
  code: string;
  message: string;
  param?: string;
  request_id?: string;
}

function ok(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }] };
}

function describeStep(step: TaskStep): string {
  return [`#${step.seq}`, step.type, step.action, step.title, step.note].filter((part) => part !== null && part !== '').join(' · ');
}

const deviceId = { device_id: z.string().max(200).describe('The device id (dev_...)') };
const taskId = { task_id: z.string().max(200).describe('The task id (task_...)') };

/** A new MCP server with the operator tools, calling `backend`. */
export function createOperatorMcpServer(backend: OperatorBackend, version = '0.1.0'): McpServer {
  const server = new McpServer({ name: 'browser-device-operator', version }, { capabilities: { tools: {} } });

  /** Runs a tool; an error the service answered becomes a tool error carrying its body. */
  const call = async (work: () => Promise<CallToolResult>): Promise<CallToolResult> => {
    try {
      return await work();
    } catch (error) {
      const body = backend.errorBody(error);
      if (body === null) throw error;
      return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: body }) }] };
    }
  };

  server.registerTool(
    'create_device',
    { description: 'Create a device (a real browser with its own profile); it is active on success.', inputSchema: CreateDeviceBodySchema.shape },
    (input) => call(async () => ok(await backend.createDevice(input))),
  );
  server.registerTool(
    'list_devices',
    { description: 'List devices, newest first (next_cursor "" means no further page).', inputSchema: { ...ListDevicesQuerySchema.shape, ...pageArguments } },
    (input) => call(async () => ok(await backend.listDevices(input))),
  );
  server.registerTool('get_device', { description: 'Get a device.', inputSchema: deviceId }, (input) => call(async () => ok(await backend.getDevice(input.device_id))));
  server.registerTool(
    'sleep_device',
    { description: 'Put a device to sleep: its browser closes, its profile is kept.', inputSchema: deviceId },
    (input) => call(async () => ok(await backend.sleepDevice(input.device_id))),
  );
  server.registerTool('wake_device', { description: 'Wake a sleeping device.', inputSchema: deviceId }, (input) => call(async () => ok(await backend.wakeDevice(input.device_id))));
  server.registerTool(
    'delete_device',
    { description: 'Delete (terminate) a device; its profile is removed.', inputSchema: deviceId },
    (input) => call(async () => ok(await backend.deleteDevice(input.device_id))),
  );
  server.registerTool(
    'run_task',
    {
      description:
        'Run a natural-language browser task on a device and wait for it to end; each step is sent as a progress notification. ' +
        'Answers with the task (status succeeded, failed or canceled, and its result), or still running after wait_secs.',
      inputSchema: {
        ...deviceId,
        ...SubmitTaskBodySchema.shape,
        wait_secs: z.number().int().min(1).max(3600).optional().describe(`How long to wait for the end (default ${RUN_TASK_DEFAULT_WAIT_SECS})`),
      },
    },
    (input, extra) =>
      call(async () => {
        const { device_id, wait_secs = RUN_TASK_DEFAULT_WAIT_SECS, ...body } = input;
        const progressToken = extra._meta?.progressToken;
        const deadline = AbortSignal.any([extra.signal, AbortSignal.timeout(wait_secs * 1000)]);
        const notifications: Promise<void>[] = [];
        const { taskId, terminal } = await backend.runTask(
          device_id,
          body,
          (step) => {
            if (progressToken === undefined) return;
            notifications.push(
              extra
                .sendNotification({ method: 'notifications/progress', params: { progressToken, progress: step.seq, message: describeStep(step) } })
                .catch(() => undefined),
            );
          },
          deadline,
        );
        await Promise.all(notifications);
        return ok(terminal ?? (await backend.getTask(taskId)));
      }),
  );
  server.registerTool('get_task', { description: 'Get a task: status, result, usage.', inputSchema: taskId }, (input) => call(async () => ok(await backend.getTask(input.task_id))));
  server.registerTool(
    'get_step_screenshot',
    {
      description: "Get the screenshot (JPEG) of the page after one of a task's steps; seq is the step's number as in the task's steps.",
      inputSchema: { ...taskId, seq: z.number().int().min(1).max(999_999_999).describe("The step's seq (1, 2, ...)") },
    },
    (input) =>
      call(async () => {
        const jpeg = await backend.stepScreenshot(input.task_id, input.seq);
        return { content: [{ type: 'image', data: Buffer.from(jpeg).toString('base64'), mimeType: 'image/jpeg' }] };
      }),
  );
  server.registerTool(
    'cancel_task',
    { description: 'Cancel a running or parked task.', inputSchema: taskId },
    (input) => call(async () => ok(await backend.cancelTask(input.task_id))),
  );
  server.registerTool(
    'list_escalations',
    { description: 'List escalations (the agent asking a human), newest first; filter by status and task_id.', inputSchema: { ...ListEscalationsQuerySchema.shape, ...pageArguments } },
    (input) => call(async () => ok(await backend.listEscalations(input))),
  );
  server.registerTool(
    'answer_escalation',
    {
      description:
        "Answer an escalation, resuming its task. Needs the escalation's own bearer `token` from its delivery to the escalation URL " +
        '(the API has no answer route for API keys); `cleared: false` fails the task.',
      inputSchema: { escalation_id: z.string().max(200), token: z.string().max(200), ...ResolveEscalationBodySchema.shape },
    },
    (input) =>
      call(async () => {
        const { escalation_id, token, ...body } = input;
        return ok(await backend.resolveEscalation(escalation_id, token, body));
      }),
  );
  // registerTool declares `tools.listChanged: true`, but the tools never change (and /mcp,
  // stateless, could not tell a client if they did): the capability says only `tools`.
  server.server.registerCapabilities({ tools: { listChanged: undefined } });
  return server;
}
