import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '../support/http';
import { RawConnection, type RawResponse } from '../support/raw-http';
import { parseSse, waitForTaskEnd } from '../support/task-helpers';
import { allScopes, createTenant, startTestService, type TestService } from '../support/test-service';

// HTTP as proxies use it: requests one after another on one connection, kept alive across
// every kind of route (the event stream of a finished task among them) with the idle time
// announced (docs/api.md, "Connections"); `Connection: close`
// answered with `close` and the socket closed by the server, never kept open for a bare 400;
// and what Node cannot parse logged and answered with the CONTRACT.md body.

let test: TestService;
let key: string;
let taskId: string;
let screenshotSeq: number;
const logLines: string[] = [];
const METRICS_TOKEN = 'connections-test-metrics-token';

beforeAll(async () => {
  // Warnings only: the refused request's line is what the tests read.
  test = await startTestService({ OPERATOR_LOG_LEVEL: 'warn', OPERATOR_METRICS_TOKEN: METRICS_TOKEN }, { logDestination: { write: (line) => logLines.push(line) } });
  const tenant = await createTenant(test);
  key = await tenant.key(allScopes);
  const api = apiClient(test.url, key);
  const device = await api('POST', '/v1/devices', { space_id: tenant.spaceId });
  expect(device.status).toBe(201);
  const submitted = await api('POST', `/v1/devices/${device.body.id}/tasks`, { prompt: 'return the title' });
  expect(submitted.status).toBe(202);
  taskId = submitted.body.id;
  expect((await waitForTaskEnd(api, taskId)).status).toBe('succeeded');
  const events = await api('GET', `/v1/tasks/${taskId}/events`);
  const steps = parseSse(events.body as string).filter((frame) => frame.event === 'step').map((frame) => JSON.parse(frame.data!));
  screenshotSeq = steps.find((step) => step.screenshot_url !== null).seq;
}, 120_000);
afterAll(async () => {
  await test?.stop();
});

interface RouteKind {
  kind: string;
  method: string;
  path: () => string;
  headers?: () => Record<string, string>;
  body?: string;
  status: number;
  /** Checks the answer's body says what the route answers. */
  answered: (response: RawResponse) => void;
}

const bearer = () => ({ Authorization: `Bearer ${key}` });
const MCP_INITIALIZE = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'connections-test', version: '1' } } });
const errorCode = (response: RawResponse) => JSON.parse(response.body.toString()).error.code;

const routeKinds: RouteKind[] = [
  { kind: 'REST (tRPC)', method: 'GET', path: () => '/v1/whoami', headers: bearer, status: 200, answered: (r) => expect(JSON.parse(r.body.toString()).scopes.length).toBeGreaterThan(0) },
  {
    kind: 'event stream',
    method: 'GET',
    path: () => `/v1/tasks/${taskId}/events`,
    headers: bearer,
    status: 200,
    answered: (r) => expect(parseSse(r.body.toString()).at(-1)?.event).toBe('done'),
  },
  { kind: 'recording (Range)', method: 'GET', path: () => `/v1/tasks/${taskId}/recording`, headers: () => ({ ...bearer(), Range: 'bytes=0-99' }), status: 206, answered: (r) => expect(r.body.length).toBe(100) },
  { kind: 'screenshot', method: 'GET', path: () => `/v1/tasks/${taskId}/steps/${screenshotSeq}/screenshot`, headers: bearer, status: 200, answered: (r) => expect(r.body.subarray(0, 2).toString('hex')).toBe('ffd8') },
  { kind: 'file (raw route error)', method: 'GET', path: () => `/v1/tasks/${taskId}/files/file_none`, headers: bearer, status: 404, answered: (r) => expect(errorCode(r)).toBe('file_not_found') },
  {
    kind: 'MCP',
    method: 'POST',
    path: () => '/mcp',
    headers: () => ({ ...bearer(), 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }),
    body: MCP_INITIALIZE,
    status: 200,
    answered: (r) => expect(r.body.toString()).toContain('"serverInfo"'),
  },
  { kind: 'metrics', method: 'GET', path: () => '/metrics', headers: () => ({ Authorization: `Bearer ${METRICS_TOKEN}` }), status: 200, answered: (r) => expect(r.body.toString()).toContain('# HELP') },
  { kind: 'health', method: 'GET', path: () => '/healthz', status: 200, answered: (r) => expect(JSON.parse(r.body.toString())).toEqual({ ok: true }) },
  { kind: 'OpenAPI document', method: 'GET', path: () => '/v1/openapi.json', status: 200, answered: (r) => expect(JSON.parse(r.body.toString()).openapi).toMatch(/^3\.1/) },
  { kind: 'docs page', method: 'GET', path: () => '/docs', status: 200, answered: (r) => expect(r.body.toString()).toContain('api-reference') },
  { kind: 'console API', method: 'GET', path: () => '/console/api/me', status: 403, answered: (r) => expect(r.body.toString()).toContain('console_header_required') },
  { kind: 'unknown path', method: 'GET', path: () => '/nowhere', status: 404, answered: (r) => expect(errorCode(r)).toBe('not_found') },
];

async function send(connection: RawConnection, route: RouteKind, extra: Record<string, string> = {}): Promise<RawResponse> {
  const response = await connection.request(route.method, route.path(), { ...route.headers?.(), ...extra }, route.body);
  expect({ kind: route.kind, status: response.status }).toEqual({ kind: route.kind, status: route.status });
  route.answered(response);
  return response;
}

describe('connections', () => {
  it('keeps one connection alive across every kind of route, an event stream that ends among them', async () => {
    const connection = await RawConnection.open(test.url);
    try {
      // Twice round, so every route is also answered after an event stream on the same socket.
      for (const route of [...routeKinds, ...routeKinds]) {
        const response = await send(connection, route);
        expect({ kind: route.kind, connection: response.headers.connection, keepAlive: response.headers['keep-alive'] }).toEqual({ kind: route.kind, connection: 'keep-alive', keepAlive: 'timeout=5' });
        expect(connection.closedByServer).toBe(false);
      }
      const last = await send(connection, routeKinds[0]!, { Connection: 'close' });
      expect(last.headers.connection).toBe('close');
      await connection.ended;
    } finally {
      connection.close();
    }
  });

  it('answers `Connection: close` with close on every kind of route and closes the socket after the answer', async () => {
    for (const route of routeKinds) {
      const connection = await RawConnection.open(test.url);
      try {
        await send(connection, routeKinds[0]!);
        const response = await send(connection, route, { Connection: 'close' });
        expect({ kind: route.kind, connection: response.headers.connection }).toEqual({ kind: route.kind, connection: 'close' });
        await connection.ended;
        expect(connection.closedByServer).toBe(true);
      } finally {
        connection.close();
      }
    }
  });

  it('logs a request Node cannot parse and answers it 400 invalid_request with a request id, then closes', async () => {
    const connection = await RawConnection.open(test.url);
    try {
      await send(connection, routeKinds[0]!);
      // A header line without a colon, carrying a key that must not reach the log.
      connection.write(`GET /v1/whoami HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nnot a header\r\n\r\n`);
      const refused = await connection.readResponse();
      expect(refused.status).toBe(400);
      expect(refused.headers['content-type']).toBe('application/json');
      expect(refused.headers.connection).toBe('close');
      const body = JSON.parse(refused.body.toString());
      expect(body).toEqual({ error: { code: 'invalid_request', message: 'The request is not valid HTTP/1.1.', request_id: refused.headers['x-request-id'] } });
      expect(body.error.request_id).toMatch(/^req_[0-9a-f-]{36}$/);
      await connection.ended;

      const logged = logLines.map((line) => JSON.parse(line)).find((line) => line.requestId === body.error.request_id);
      expect(logged).toMatchObject({ msg: 'unparseable request refused', code: 'HPE_INVALID_HEADER_TOKEN' });
      expect(logLines.join('\n')).not.toContain(key.split('_').at(-1));
    } finally {
      connection.close();
    }
  });

  it('takes a client that leaves in the middle of its body as the client gone, not as an error of the service', async () => {
    const { port } = new URL(test.url);
    const logged = logLines.length;
    // A JSON body (a /v1 procedure, the resolve callback, the console's API, MCP), a form
    // (OAuth), and a chunked body: each declared longer than what is sent before the reset.
    const cutShort = [
      `POST /v1/devices HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"space_id":`,
      'POST /v1/escalations/esc_00000000-0000-0000-0000-000000000000/resolve HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer esctok_x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"answer":',
      'POST /console/api/signIn HTTP/1.1\r\nHost: 127.0.0.1\r\nx-svc-console: 1\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"key":',
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 5000\r\n\r\n{"jsonrpc":`,
      'POST /oauth/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 5000\r\n\r\ngrant_type=',
      `POST /v1/devices HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"spa\r\n`,
    ];
    for (const request of cutShort) {
      await new Promise<void>((resolve) => {
        const socket = connect(Number(port), '127.0.0.1', () => {
          socket.write(request);
          setTimeout(() => {
            socket.resetAndDestroy();
            resolve();
          }, 50);
        });
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    const errors = logLines.slice(logged).filter((line) => JSON.parse(line).level >= 50);
    expect(errors).toEqual([]);
    expect((await apiClient(test.url, key)('GET', '/v1/whoami')).status).toBe(200);
  });
});
