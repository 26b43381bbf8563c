import { OperatorClient, OperatorError } from '@browser-device-operator/sdk';
import type { OperationTool, OperatorBackend } from './tools';

/**
 * The tools of the stdio MCP server: a client of the REST API through the SDK, so the key's
 * scopes and tenancy are enforced by the service exactly as for any API call.
 */
export function sdkBackend(client: OperatorClient): OperatorBackend {
  const firstPage = <T>(pages: PromiseLike<T>): Promise<T> => Promise.resolve(pages);
  /** Each operation tool as its SDK call, with the path's id and the rest of its input. */
  const operations: Record<OperationTool, (id: string, input: Record<string, never>) => Promise<unknown>> = {
    createDevice: (_id, body) => client.devices.create(body),
    listDevices: (_id, query) => firstPage(client.devices.list(query)),
    getDevice: (id) => client.devices.get(id),
    sleepDevice: (id) => client.devices.sleep(id),
    wakeDevice: (id) => client.devices.wake(id),
    deleteDevice: (id) => client.devices.delete(id),
    getTask: (id) => client.tasks.get(id),
    cancelTask: (id) => client.tasks.cancel(id),
    listEscalations: (_id, query) => firstPage(client.escalations.list(query)),
  };
  return {
    operation: (name, input) => {
      // The arguments were checked against the operation's own input schema (tools.ts).
      const { id, ...rest } = input as { id: string } & Record<string, never>;
      return operations[name](id, rest);
    },
    stepScreenshot: (taskId, seq) => client.tasks.stepScreenshot(taskId, seq),
    resolveEscalation: (id, token, body) => client.escalations.resolve(id, token, body),
    async runTask(deviceId, body, onStep, signal) {
      const { id: taskId } = await client.tasks.submit(deviceId, body);
      try {
        for await (const event of client.tasks.events(taskId, { signal })) {
          if (event.type === 'step') onStep(event.step);
          else return { taskId, terminal: event.task };
        }
      } catch (error) {
        if (!signal.aborted) throw error;
      }
      return { taskId, terminal: null };
    },
    errorBody(error) {
      if (!(error instanceof OperatorError) || error.status === 0) return null;
      return { code: error.code, message: error.message, ...(error.param === undefined ? {} : { param: error.param }), ...(error.request_id === null ? {} : { request_id: error.request_id }) };
    },
  };
}
