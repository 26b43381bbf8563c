import { ServerResponse, type IncomingMessage } from 'node:http';
import { buffer } from 'node:stream/consumers';
import { appRouter } from '../api/router';
import type { EntryServices } from '../api/entry-point';
import { findStepScreenshot, getStepScreenshot } from '../api/tasks';
import { ApiError, asApiError } from '../core/errors';
import { newPublicId, parsePublicId } from '../domain/ids';
import type { Principal } from '../domain/keys/principal';
import { resolveCaller } from '../http/resolve-caller';
import { t } from '../trpc/init';
import { unwrapTrpcError } from '../trpc/unwrap-trpc-error';
import type { OperatorBackend } from './tools';

const createCaller = t.createCallerFactory(appRouter);

/** The MCP request: its id (tool errors without a call of their own quote it), and who /mcp authenticated. */
export interface McpRequest {
  req: IncomingMessage;
  requestId: string;
  principal: Principal;
}

/**
 * The tools of /mcp on the service: each one calls the tRPC procedure of its REST route
 * with the MCP request's own `Authorization`, so authentication, rate limit, scope,
 * entitlement and tenancy are exactly the REST API's. Every call gets a request id of its
 * own and a response object of its own (the rate-limit headers of inner calls must not
 * touch the MCP response, which may already be streaming). run_task holds one of the
 * key's event-stream slots while it follows a task, and ends at shutdown like a stream.
 */
export function httpBackend(services: EntryServices, mcp: McpRequest): OperatorBackend {
  const { req } = mcp;
  // The request id of each failed call, so its tool error quotes the id its logs and audit carry.
  const failedCalls = new WeakMap<object, string>();
  type Caller = ReturnType<typeof createCaller>;
  /**
   * One procedure call with a request id of its own. The principal /mcp authenticated
   * (an API key or an OAuth access token) is handed over, so the procedure checks rate
   * limit, scope and entitlement without authenticating the bearer again.
   */
  const call = async <T>(work: (caller: Caller) => Promise<T>, request: IncomingMessage = req, principal: Principal | undefined = mcp.principal): Promise<T> => {
    const requestId = newPublicId('request');
    try {
      return await work(createCaller({ requestId, req: request, res: new ServerResponse(request), services, bodyError: null, authenticated: principal }));
    } catch (error) {
      if (typeof error === 'object' && error !== null) failedCalls.set(error, requestId);
      throw error;
    }
  };
  return {
    operation: (name, input) => call((caller) => (caller[name] as (input: unknown) => Promise<unknown>)(input)),
    async stepScreenshot(taskId, seq) {
      // A raw route (its body is bytes): its caller is resolved by the route's own declared rule.
      const { principal } = await resolveCaller(services, req, new ServerResponse(req), getStepScreenshot.caller, { authenticated: mcp.principal });
      const { key } = await findStepScreenshot(services, principal, taskId, String(seq));
      const body = await services.store.get(key);
      if (body === null) throw new ApiError('screenshot_not_found');
      return buffer(body);
    },
    resolveEscalation(id, token, body) {
      // The resolve callback authenticates the escalation's bearer, not the API key.
      const asCallback = Object.create(req, { headers: { value: { ...req.headers, authorization: `Bearer ${token}` } } }) as IncomingMessage;
      return call((caller) => caller.resolveEscalation({ ...body, id }), asCallback, undefined);
    },
    async runTask(deviceId, body, onStep, signal) {
      // The slot first: a key at its limit of streams gets 429 too_many_streams, and no task.
      const { keyId } = mcp.principal;
      const releaseSlot = services.eventStreams.claim(keyId);
      let taskId: string;
      try {
        taskId = (await call((caller) => caller.submitTask({ ...body, id: deviceId }))).id;
      } catch (error) {
        releaseSlot();
        throw error;
      }
      const internalId = parsePublicId('task', taskId)!;
      // As the event stream does: a revoked key or a stop ends the following at once.
      const terminal = await new Promise<unknown>((resolve, reject) => {
        const stopFollowing = services.eventStreams.follow({ feeds: services.stepFeeds, keyRevocations: services.keyRevocations }, keyId, releaseSlot, internalId, 0, {
          steps: (steps) => steps.forEach(onStep),
          done: resolve,
          failed: reject,
          stopped: () => resolve(null),
        });
        const stop = () => {
          stopFollowing();
          resolve(null);
        };
        if (signal.aborted) stop();
        else signal.addEventListener('abort', stop, { once: true });
      });
      return { taskId, terminal };
    },
    errorBody(error) {
      // An unreachable database is the service's answer too (service_unavailable); the
      // unexpected is logged with its request id and answered internal_error, never shown.
      const requestId = (typeof error === 'object' && error !== null ? failedCalls.get(error) : undefined) ?? mcp.requestId;
      const { apiError, unexpected } = asApiError(unwrapTrpcError(error));
      if (unexpected) services.log.error({ err: error, requestId }, 'unexpected error in an MCP tool');
      return apiError.toBody(requestId).error;
    },
  };
}
