import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Duplex, Writable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { formatApiKey, generateKeyId, generateSecret } from '../domain/keys/api-key-format';
import { createLogger } from '../core/log';
import { ServiceMetrics, type MetricSources } from '../metrics/service-metrics';
import type { Services } from '../services/services';
import { createRequestRouter, createUpgradeRouter } from './entry-points';
import type { TaskStepFeeds } from '../domain/tasks/task-step-feeds';
import { EventStreams } from '../domain/tasks/event-streams';

let server: Server | undefined;

afterEach(async () => {
  // The upgrade router's test starts no server.
  if (server !== undefined) await new Promise((resolve) => server!.close(resolve));
  server = undefined;
});

/** The request router on a free port, logging at `info` into `lines`; only the health probe is exercised. */
async function routerLoggingInto(lines: string[]): Promise<string> {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter((line) => line !== ''));
      done();
    },
  });
  // The health probe uses no service but the logger (metrics are observed, never rendered).
  const services = { log: createLogger('info', sink), config: { metricsToken: null } } as unknown as Services;
  const metrics = new ServiceMetrics({} as MetricSources);
  const route = createRequestRouter({ services, stepFeeds: {} as TaskStepFeeds, eventStreams: new EventStreams(1), openApiDocument: () => ({}), readiness: async () => ({ ok: true }), metrics, console: null });
  server = createServer((req, res) => void route(req, res));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('access log', () => {
  it('writes one JSON line per request with its request id, path without query, status, and the key masked to its id', async () => {
    const lines: string[] = [];
    const url = await routerLoggingInto(lines);
    const keyId = generateKeyId();
    const secret = generateSecret();
    const response = await fetch(`${url}/healthz?note=${secret}`, { headers: { Authorization: `Bearer ${formatApiKey('test', keyId, secret)}` } });
    await response.text();
    await expect.poll(() => lines.length).toBe(1);

    const line = JSON.parse(lines[0]!);
    expect(line).toMatchObject({
      level: 30,
      requestId: response.headers.get('x-request-id'),
      method: 'GET',
      path: '/healthz',
      status: 200,
      key: `svc_operator_test_${keyId}_****`,
    });
    expect(typeof line.ms).toBe('number');
    expect(lines[0]).not.toContain(secret);
  });

  it('leaves out the key of a request without a well-formed one', async () => {
    const lines: string[] = [];
    const url = await routerLoggingInto(lines);
    await (await fetch(`${url}/healthz`, { headers: { Authorization: 'Bearer not-a-key' } })).text();
    await expect.poll(() => lines.length).toBe(1);
    expect(JSON.parse(lines[0]!)).not.toHaveProperty('key');
    expect(lines[0]).not.toContain('not-a-key');
  });
});

describe('WebSocket upgrades', () => {
  it('hand each declared path to its gateway with the caller kind, the id and the path to relay; any other goes to the console, or is 404', () => {
    const taken: unknown[] = [];
    const gateway = (name: string) => ({ accept: (_req: unknown, _socket: unknown, _head: unknown, target: unknown) => void taken.push([name, target]) });
    const upgrade = (router: ReturnType<typeof createUpgradeRouter>, url: string) => {
      const socket = new Duplex({ read() {}, write(_chunk, _encoding, done) { done(); } });
      let answer = '';
      socket.end = ((chunk: string) => { answer = chunk; return socket; }) as typeof socket.end;
      router({ url } as IncomingMessage, socket, Buffer.alloc(0));
      return answer;
    };
    const withConsole = createUpgradeRouter({ liveView: gateway('live'), cdp: gateway('cdp'), console: (req) => void taken.push(['console', req.url]) });
    upgrade(withConsole, '/v1/sessions/ses_1/ws');
    upgrade(withConsole, '/V1/Sessions/ses_2/WS/?x=1');
    upgrade(withConsole, '/v1/cdp_sessions/cdp_1/devtools?token=s');
    upgrade(withConsole, '/v1/sessions/ses_1/ws/extra');
    expect(taken).toEqual([
      ['live', { caller: 'session_token', id: 'ses_1', pathAndQuery: '/v1/sessions/ses_1/ws' }],
      ['live', { caller: 'session_token', id: 'ses_2', pathAndQuery: '/v1/sessions/ses_2/ws?x=1' }],
      ['cdp', { caller: 'cdp_secret', id: 'cdp_1', pathAndQuery: '/v1/cdp_sessions/cdp_1/devtools?token=s' }],
      ['console', '/v1/sessions/ses_1/ws/extra'],
    ]);
    const withoutConsole = createUpgradeRouter({ liveView: gateway('live'), cdp: gateway('cdp'), console: null });
    expect(upgrade(withoutConsole, '/_next/webpack-hmr')).toMatch(/^HTTP\/1\.1 404 /);
  });
});
