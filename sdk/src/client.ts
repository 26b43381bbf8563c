import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './generated/schema.js';
import { connectionError, errorFromResponse, OperatorError } from './errors.js';
import { LiveView, type ConnectableSession, type WebSocketConstructor } from './live-view.js';
import { PagePromise, type Page } from './pagination.js';
import { backoffMs, DEFAULT_RETRY, retryingFetch, sleep, type RetryOptions } from './retry.js';
import { readSse } from './sse.js';
import { verifyWebhook } from './verify-webhook.js';

type Schemas = components['schemas'];
export type Device = Schemas['Device'];
export type Task = Schemas['Task'];
export type Step = Schemas['Step'];
export type Session = Schemas['Session'];
export type SessionWithToken = Schemas['SessionWithToken'];
export type Escalation = Schemas['Escalation'];
export type EscalationResolution = Schemas['EscalationResolution'];
export type TaskCache = Schemas['TaskCache'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookEndpointWithSecret = Schemas['WebhookEndpointWithSecret'];
export type Credential = Schemas['Credential'];
export type CredentialCode = Schemas['CredentialCode'];
export type AuditEvent = Schemas['AuditEvent'];
export type Usage = Schemas['Usage'];
export type Whoami = Schemas['Whoami'];
export type CreateDeviceParams = Schemas['CreateDeviceRequest'];
export type SubmitTaskParams = Schemas['SubmitTaskRequest'];
export type CreateSessionParams = Schemas['CreateSessionRequest'];
export type CreateWebhookEndpointParams = Schemas['CreateWebhookEndpointRequest'];
export type ResolveEscalationParams = Schemas['ResolveEscalationRequest'];
export type CreateCredentialParams = Schemas['CreateCredentialRequest'];
export type UpdateCredentialParams = Schemas['UpdateCredentialRequest'];
export type ListCredentialsParams = NonNullable<paths['/credentials']['get']['parameters']['query']>;
export type ListDevicesParams = NonNullable<paths['/devices']['get']['parameters']['query']>;
export type ListEscalationsParams = NonNullable<paths['/escalations']['get']['parameters']['query']>;
export type ListTaskCachesParams = NonNullable<paths['/task_caches']['get']['parameters']['query']>;

/** One event of `tasks.events()`: a step, then `done` with the terminal task. */
export type TaskEvent = { type: 'step'; step: Step } | { type: 'done'; task: Task };

const TERMINAL = new Set(['succeeded', 'failed', 'canceled']);

export interface OperatorClientOptions {
  /** `svc_operator_<env>_<key_id>_<secret>`. */
  apiKey: string;
  /** The service's URL, without `/v1`. Default `http://localhost:3000`. */
  baseUrl?: string;
  /** Retries of 429/503 answers and broken connections; `{ maxRetries: 0 }` turns them off. */
  retry?: Partial<RetryOptions>;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** The WebSocket constructor for `sessions.connect()` (default: the global one). */
  WebSocket?: WebSocketConstructor;
}

export interface RequestOptions {
  /** Sent as `Idempotency-Key`; by default every POST gets a fresh one, reused by its retries. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface EventsOptions {
  /** Start after this step seq (resume where a previous reader stopped). Default 0. */
  afterSeq?: number;
  signal?: AbortSignal;
  /** Reconnections in a row that bring nothing new before giving up. Default 5. */
  maxReconnects?: number;
}

export interface RunOptions extends Omit<SubmitTaskParams, 'prompt'>, RequestOptions {
  /** Called with each step as it happens. */
  onStep?: (step: Step) => void;
}

/** `{ data, error, response }` of openapi-fetch → the data, or the typed error thrown. */
async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: Awaited<typeof call>;
  try {
    result = await call;
  } catch (error) {
    throw error instanceof OperatorError ? error : connectionError(error);
  }
  if (result.response.ok) return result.data as T;
  throw errorFromResponse(result.response, result.error);
}

function headersOf(options: RequestOptions | undefined): Record<string, string> {
  return options?.idempotencyKey === undefined ? {} : { 'Idempotency-Key': options.idempotencyKey };
}

/**
 * The client of the Browser Device Operator Service.
 *
 * ```ts
 * const operator = new OperatorClient({ apiKey: process.env.OPERATOR_API_KEY! });
 * const device = await operator.devices.create({ name: 'shopper' });
 * const task = await operator.tasks.run(device.id, 'go to https://example.com then return the title');
 * ```
 */
export class OperatorClient {
  /** The typed openapi-fetch client under the surface, for routes the surface does not wrap. */
  readonly api: Client<paths>;
  readonly baseUrl: string;
  private readonly fetchWithRetries: (request: Request) => Promise<Response>;
  private readonly retry: RetryOptions;
  private readonly WebSocketClass: WebSocketConstructor | undefined;

  constructor(private readonly options: OperatorClientOptions) {
    if (typeof options.apiKey !== 'string' || options.apiKey === '') throw new TypeError('OperatorClient needs an apiKey');
    this.baseUrl = (options.baseUrl ?? 'http://localhost:3000').replace(/\/+$/, '').replace(/\/v1$/, '');
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.fetchWithRetries = retryingFetch(options.fetch ?? globalThis.fetch, this.retry, () => crypto.randomUUID());
    this.WebSocketClass = options.WebSocket ?? (globalThis.WebSocket as WebSocketConstructor | undefined);
    this.api = createClient<paths>({
      baseUrl: `${this.baseUrl}/v1`,
      headers: { Authorization: `Bearer ${options.apiKey}` },
      fetch: this.fetchWithRetries,
    });
  }

  /** The key's organization, Spaces and scopes. */
  whoami(): Promise<Whoami> {
    return unwrap(this.api.GET('/whoami'));
  }

  readonly devices = {
    create: (params: CreateDeviceParams = {}, options?: RequestOptions): Promise<Device> =>
      unwrap(this.api.POST('/devices', { body: params, headers: headersOf(options), signal: options?.signal })),
    get: (id: string): Promise<Device> => unwrap(this.api.GET('/devices/{id}', { params: { path: { id } } })),
    /** Await for the first page, or `for await` over every device. */
    list: ({ cursor: start, ...params }: ListDevicesParams = {}): PagePromise<Device> =>
      new PagePromise((cursor) => unwrap(this.api.GET('/devices', { params: { query: { ...params, cursor } } })) as Promise<Page<Device>>, start),
    sleep: (id: string): Promise<Device> => unwrap(this.api.POST('/devices/{id}/sleep', { params: { path: { id } } })),
    wake: (id: string): Promise<Device> => unwrap(this.api.POST('/devices/{id}/wake', { params: { path: { id } } })),
    delete: (id: string): Promise<Device> => unwrap(this.api.DELETE('/devices/{id}', { params: { path: { id } } })),
  };

  readonly tasks = {
    submit: (deviceId: string, params: SubmitTaskParams, options?: RequestOptions): Promise<Task> =>
      unwrap(this.api.POST('/devices/{id}/tasks', { params: { path: { id: deviceId } }, body: params, headers: headersOf(options), signal: options?.signal })),
    get: (id: string): Promise<Task> => unwrap(this.api.GET('/tasks/{id}', { params: { path: { id } } })),
    cancel: (id: string): Promise<Task> => unwrap(this.api.POST('/tasks/{id}/cancel', { params: { path: { id } } })),
    /** The JPEG of the page after step `seq` of the task (a step's `screenshot_url`), as bytes. */
    stepScreenshot: async (id: string, seq: number): Promise<Uint8Array> =>
      new Uint8Array(await unwrap(this.api.GET('/tasks/{id}/steps/{seq}/screenshot', { params: { path: { id, seq } }, parseAs: 'arrayBuffer' }))),
    /** A device's tasks, newest first; await for a page or `for await` over all. */
    list: (deviceId: string, params: { limit?: number } = {}): PagePromise<Task> =>
      new PagePromise(
        (cursor) => unwrap(this.api.GET('/devices/{id}/tasks', { params: { path: { id: deviceId }, query: { ...params, cursor } } })) as Promise<Page<Task>>,
      ),
    /**
     * The task's steps as they happen, then `done` with the terminal task. A dropped
     * connection (or the service's 300 s stream limit) is resumed with `after_seq`, so no
     * step is repeated or skipped.
     */
    events: (id: string, options: EventsOptions = {}): AsyncGenerator<TaskEvent> => this.streamEvents(id, options),
    /** Submits a task and resolves with it once terminal (`succeeded`, `failed` or `canceled`). */
    run: async (deviceId: string, prompt: string, options: RunOptions = {}): Promise<Task> => {
      const { onStep, idempotencyKey, signal, ...params } = options;
      const task = await this.tasks.submit(deviceId, { ...params, prompt }, { idempotencyKey, signal });
      for await (const event of this.streamEvents(task.id, { signal })) {
        if (event.type === 'step') onStep?.(event.step);
        else return event.task;
      }
      return this.tasks.get(task.id);
    },
  };

  /** Replay cache entries: the stored steps of a successful task with a `cache_key`. */
  readonly taskCaches = {
    list: ({ cursor: start, ...params }: ListTaskCachesParams = {}): PagePromise<TaskCache> =>
      new PagePromise((cursor) => unwrap(this.api.GET('/task_caches', { params: { query: { ...params, cursor } } })) as Promise<Page<TaskCache>>, start),
    get: (id: string): Promise<TaskCache> => unwrap(this.api.GET('/task_caches/{id}', { params: { path: { id } } })),
    /** The next task with its key runs with the planner again (a miss). */
    delete: async (id: string): Promise<void> => {
      await unwrap(this.api.DELETE('/task_caches/{id}', { params: { path: { id } } }));
    },
  };

  readonly sessions = {
    create: (deviceId: string, params: CreateSessionParams = {}): Promise<SessionWithToken> =>
      unwrap(this.api.POST('/devices/{id}/sessions', { params: { path: { id: deviceId } }, body: params })),
    get: (id: string): Promise<Session> => unwrap(this.api.GET('/sessions/{id}', { params: { path: { id } } })),
    revoke: async (id: string): Promise<void> => {
      await unwrap(this.api.DELETE('/sessions/{id}', { params: { path: { id } } }));
    },
    /** Pauses the device's running task so this control session's inputs reach the page. */
    takeOver: (id: string, params: Schemas['TakeOverRequest'] = {}): Promise<Schemas['TakeoverResult']> =>
      unwrap(this.api.POST('/sessions/{id}/takeover', { params: { path: { id } }, body: params })),
    /** Ends the takeover; the task resumes. */
    release: (id: string): Promise<Schemas['ReleaseResult']> => unwrap(this.api.POST('/sessions/{id}/release', { params: { path: { id } } })),
    /**
     * Opens the live view of a session created with `sessions.create()` (its `ws_url` and
     * `session_token`): iterate for frames, `send()` inputs on a control session. It
     * reconnects by itself when the service restarts (close code 1012; see `onReconnect`).
     */
    connect: (session: ConnectableSession): LiveView => {
      if (this.WebSocketClass === undefined) throw new TypeError('No WebSocket: pass one as `WebSocket` in the client options (e.g. from the ws package)');
      return LiveView.open(session, this.WebSocketClass);
    },
  };

  readonly escalations = {
    list: ({ cursor: start, ...params }: ListEscalationsParams = {}): PagePromise<Escalation> =>
      new PagePromise((cursor) => unwrap(this.api.GET('/escalations', { params: { query: { ...params, cursor } } })) as Promise<Page<Escalation>>, start),
    get: (id: string): Promise<Escalation> => unwrap(this.api.GET('/escalations/{id}', { params: { path: { id } } })),
    /**
     * Answers an escalation with the per-escalation `token` of its delivery (not the API
     * key), as the escalation destination does with `resolve_url`.
     */
    resolve: (id: string, token: string, params: ResolveEscalationParams): Promise<EscalationResolution> =>
      unwrap(this.api.POST('/escalations/{id}/resolve', { params: { path: { id } }, body: params, headers: { Authorization: `Bearer ${token}` } })),
  };

  readonly webhookEndpoints = {
    create: (params: CreateWebhookEndpointParams): Promise<WebhookEndpointWithSecret> => unwrap(this.api.POST('/webhook_endpoints', { body: params })),
    get: (id: string): Promise<WebhookEndpoint> => unwrap(this.api.GET('/webhook_endpoints/{id}', { params: { path: { id } } })),
    list: (params: { limit?: number } = {}): PagePromise<WebhookEndpoint> =>
      new PagePromise((cursor) => unwrap(this.api.GET('/webhook_endpoints', { params: { query: { ...params, cursor } } })) as Promise<Page<WebhookEndpoint>>),
    delete: async (id: string): Promise<void> => {
      await unwrap(this.api.DELETE('/webhook_endpoints/{id}', { params: { path: { id } } }));
    },
  };

  /**
   * The credential vault: secrets go in and are never returned; tasks fill them with
   * `{{vault:<name>.<field>}}`. `pushCode` hands over a one-time code a system received
   * (SMS, e-mail) for the next fill of `.code` (5 minutes, used once).
   */
  readonly credentials = {
    create: (params: CreateCredentialParams): Promise<Credential> => unwrap(this.api.POST('/credentials', { body: params })),
    get: (id: string): Promise<Credential> => unwrap(this.api.GET('/credentials/{id}', { params: { path: { id } } })),
    list: ({ cursor: start, ...params }: ListCredentialsParams = {}): PagePromise<Credential> =>
      new PagePromise((cursor) => unwrap(this.api.GET('/credentials', { params: { query: { ...params, cursor } } })) as Promise<Page<Credential>>, start),
    update: (id: string, params: UpdateCredentialParams): Promise<Credential> => unwrap(this.api.PATCH('/credentials/{id}', { params: { path: { id } }, body: params })),
    delete: async (id: string): Promise<void> => {
      await unwrap(this.api.DELETE('/credentials/{id}', { params: { path: { id } } }));
    },
    pushCode: (id: string, code: string): Promise<CredentialCode> => unwrap(this.api.POST('/credentials/{id}/codes', { params: { path: { id } }, body: { code } })),
  };

  /** Receiver side: checks `X-Service-Signature` and returns the parsed body (see verifyWebhook). */
  readonly webhooks = { verify: verifyWebhook };

  private async *streamEvents(id: string, options: EventsOptions): AsyncGenerator<TaskEvent> {
    let afterSeq = options.afterSeq ?? 0;
    let fruitless = 0;
    const maxReconnects = options.maxReconnects ?? 5;
    for (;;) {
      let progressed = false;
      try {
        const url = `${this.baseUrl}/v1/tasks/${encodeURIComponent(id)}/events?after_seq=${afterSeq}`;
        const request = new Request(url, { headers: { Authorization: `Bearer ${this.options.apiKey}`, Accept: 'text/event-stream' }, signal: options.signal });
        const response = await this.fetchWithRetries(request);
        if (!response.ok) throw errorFromResponse(response, await response.json().catch(() => null));
        for await (const message of readSse(response.body!)) {
          if (message.event === 'step') {
            const step = JSON.parse(message.data) as Step;
            if (step.seq <= afterSeq) continue;
            afterSeq = step.seq;
            progressed = true;
            yield { type: 'step', step };
          } else if (message.event === 'done') {
            yield { type: 'done', task: JSON.parse(message.data) as Task };
            return;
          }
        }
      } catch (error) {
        // Typed answers of the service (404, 403, ...) are final; a broken stream is resumed.
        if (options.signal?.aborted) throw error;
        if (error instanceof OperatorError && !(error.status === 0)) throw error;
      }
      // The stream ended without `done`: the connection dropped or its time ran out.
      fruitless = progressed ? 0 : fruitless + 1;
      if (fruitless > maxReconnects) {
        const task = await this.tasks.get(id);
        if (TERMINAL.has(task.status)) {
          yield { type: 'done', task };
          return;
        }
        throw connectionError(new Error('the task event stream keeps closing'));
      }
      if (fruitless > 0) await sleep(backoffMs(fruitless - 1, this.retry, undefined), options.signal);
    }
  }
}
