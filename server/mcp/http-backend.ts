import { ServerResponse, type IncomingMessage } from 'node:http';
import { buffer } from 'node:stream/consumers';
import { appRouter } from '../api/router';
import { findStepScreenshot, STEP_SCREENSHOT_SCOPES } from '../api/tasks/get-step-screenshot';
import { ApiError, asApiError } from '../core/errors';
import { parsePublicId } from '../domain/ids';
import type { TaskStepFeeds } from '../domain/tasks/task-step-feeds';
import { authorizeRequest } from '../http/authorize';
import type { EventStreams } from '../http/event-stream';
import type { Services } from '../services/services';
import { t } from '../trpc/init';
import { unwrapTrpcError } from '../trpc/unwrap-trpc-error';
import type { OperatorBackend } from './tools';

const createCaller = t.createCallerFactory(appRouter);

/**
 * The tools of /mcp on the service: each one calls the tRPC procedure of its REST route
 * with the MCP request's own `Authorization`, so authentication, rate limit, scope,
 * entitlement and tenancy are exactly the REST API's. Every call gets a request id of its
 * own and a response object of its own (the rate-limit headers of inner calls must not
 * touch the MCP response, which may already be streaming).
 */
export interface McpFollowing {
  feeds: TaskStepFeeds;
  /** run_task holds one of the key's event-stream slots while it follows a task, and ends at shutdown like a stream. */
  streams: EventStreams;
  keyId: string;
}

export function httpBackend(services: Services, following: McpFollowing, req: IncomingMessage, newRequestId: () => string): OperatorBackend {
  const caller = (request: IncomingMessage = req) => createCaller({ requestId: newRequestId(), req: request, res: new ServerResponse(request), services, bodyError: null });
  return {
    createDevice: (body) => caller().createDevice(body),
    listDevices: (query) => caller().listDevices({ limit: 20, ...query }),
    getDevice: (id) => caller().getDevice({ id }),
    sleepDevice: (id) => caller().sleepDevice({ id }),
    wakeDevice: (id) => caller().wakeDevice({ id }),
    deleteDevice: (id) => caller().deleteDevice({ id }),
    getTask: (id) => caller().getTask({ id }),
    cancelTask: (id) => caller().cancelTask({ id }),
    async stepScreenshot(taskId, seq) {
      // A raw route (its body is bytes), so its checks are called as that route calls them.
      const principal = await authorizeRequest(services, req, new ServerResponse(req), STEP_SCREENSHOT_SCOPES);
      const { key } = await findStepScreenshot(services, principal, taskId, String(seq));
      const body = await services.store.get(key);
      if (body === null) throw new ApiError('screenshot_not_found');
      return buffer(body);
    },
    listEscalations: (query) => caller().listEscalations({ limit: 20, ...query }),
    resolveEscalation(id, token, body) {
      // The resolve callback authenticates the escalation's bearer, not the API key.
      const asCallback = Object.create(req, { headers: { value: { ...req.headers, authorization: `Bearer ${token}` } } }) as IncomingMessage;
      return caller(asCallback).resolveEscalation({ ...body, id });
    },
    async runTask(deviceId, body, onStep, signal) {
      // The slot first: a key at its limit of streams gets 429 too_many_streams, and no task.
      const releaseSlot = following.streams.claim(following.keyId);
      let taskId: string;
      try {
        taskId = (await caller().submitTask({ ...body, id: deviceId })).id;
      } catch (error) {
        releaseSlot();
        throw error;
      }
      const internalId = parsePublicId('task', taskId)!;
      const terminal = await new Promise<unknown>((resolve, reject) => {
        let finished = false;
        const finish = (settle: () => void) => {
          if (finished) return;
          finished = true;
          signal.removeEventListener('abort', stop);
          unsubscribe();
          forget();
          unwatchKey();
          releaseSlot();
          settle();
        };
        const stop = () => finish(() => resolve(null));
        const forget = following.streams.add(stop);
        // As the event stream does: a revoked key stops following at once.
        const unwatchKey = services.keyRevocations.watch(following.keyId, stop);
        const unsubscribe = following.feeds.subscribe(internalId, 0, {
          steps: (steps) => steps.forEach(onStep),
          done: (task) => finish(() => resolve(task)),
          failed: (error) => finish(() => reject(error)),
        });
        if (signal.aborted) stop();
        else signal.addEventListener('abort', stop, { once: true });
      });
      return { taskId, terminal };
    },
    errorBody(error) {
      // An unreachable database is the service's answer too (service_unavailable).
      const { apiError, unexpected } = asApiError(unwrapTrpcError(error));
      if (unexpected) return null;
      const { code, message, param } = apiError.toBody('').error;
      return { code, message, ...(param === undefined ? {} : { param }) };
    },
  };
}
