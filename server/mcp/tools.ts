import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { appRouter } from '../api/router';
import { ResolveEscalationBodySchema, type ResolveEscalationBody } from '../domain/escalations/resolve-escalation';
import { SubmitTaskBodySchema, type SubmitTaskBody } from '../domain/tasks/task-input';
import type { TaskStep } from '../domain/tasks/task-steps';
import type { Meta } from '../trpc/init';

// The MCP tools, one definition for both transports: over Streamable HTTP on the service
// (each call goes through the same tRPC procedure as its REST route, http-backend.ts) and
// over stdio (a client of the REST API through the SDK, stdio.ts). The tools that are one
// /v1 operation are declared by it (api/router.ts); the others (run_task,
// get_step_screenshot, answer_escalation) use the REST field names and the same schemas.

/**
 * The tools that are one /v1 operation each, by its name in api/router.ts: the tool is
 * the operation's name in snake case, described by its summary, its arguments the
 * operation's input with the path's `id` named for its resource (`device_id`, `task_id`).
 */
export const OPERATION_TOOLS = ['createDevice', 'listDevices', 'getDevice', 'sleepDevice', 'wakeDevice', 'deleteDevice', 'getTask', 'cancelTask', 'listEscalations'] as const;
export type OperationTool = (typeof OPERATION_TOOLS)[number];

const deviceId = { device_id: z.string().max(200).describe('The device id (dev_...)') };
const taskId = { task_id: z.string().max(200).describe('The task id (task_...)') };
/** The argument a path's `{id}` is, by the path's first segment. */
const PATH_IDS: Record<string, typeof deviceId | typeof taskId> = { devices: deviceId, tasks: taskId };

/** A list query as a tool argument: `limit` a plain integer (the REST query coerces text). */
const pageArguments = { limit: z.number().int().min(1).max(100).optional(), cursor: z.string().max(512).optional() };

const snakeCase = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** An operation's declaration as a tool's: its summary, and its input as arguments (`pathId`: the one its path's `id` is). */
function operationTool(operation: OperationTool): { description: string; shape: z.ZodRawShape; pathId: string | null } {
  const { _def } = appRouter._def.procedures[operation] as unknown as { _def: { meta: Meta; inputs: z.ZodObject[] } };
  const { id, ...shape } = _def.inputs[0]!.shape;
  const openapi = _def.meta.openapi!;
  if (id === undefined && 'limit' in shape) return { description: `${openapi.summary!} (next_cursor "" means no further page)`, shape: { ...shape, ...pageArguments }, pathId: null };
  if (id === undefined) return { description: openapi.summary!, shape, pathId: null };
  const pathArgument = PATH_IDS[openapi.path.split('/')[1]!];
  if (pathArgument === undefined) throw new Error(`No tool argument is named for the id of ${openapi.path}`);
  return { description: openapi.summary!, shape: { ...pathArgument, ...shape }, pathId: Object.keys(pathArgument)[0]! };
}

/** How long `run_task` follows a task before answering with it still running. */
export const RUN_TASK_DEFAULT_WAIT_SECS = 300;

/** What the tools need of the service; each method is one REST route. */
export interface OperatorBackend {
  /** One of OPERATION_TOOLS, called with its /v1 input (the path's `id` included). */
  operation(name: OperationTool, input: Record<string, unknown>): Promise<unknown>;
  /** GET /v1/tasks/{id}/steps/{seq}/screenshot: the JPEG's bytes. */
  stepScreenshot(taskId: string, seq: number): Promise<Uint8Array>;
  /**
   * Submits a task and hands over its steps as they happen until it is terminal (then
   * `terminal` is the task) or the signal aborts (`terminal` null).
   */
  runTask(deviceId: string, body: SubmitTaskBody, onStep: (step: TaskStep) => void, signal: AbortSignal): Promise<{ taskId: string; terminal: unknown }>;
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

  for (const operation of OPERATION_TOOLS) {
    const { description, shape, pathId } = operationTool(operation);
    server.registerTool(snakeCase(operation), { description, inputSchema: shape }, (input: Record<string, unknown>) => {
      const { [pathId ?? 'id']: id, ...rest } = input;
      return call(async () => ok(await backend.operation(operation, pathId === null ? input : { ...rest, id })));
    });
  }
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
        return ok(terminal ?? (await backend.operation('getTask', { id: taskId })));
      }),
  );
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
