import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { formatApiKey, generateKeyId, generateSecret } from '../domain/keys/api-key-format';
import { createLogger } from '../core/log';
import { ServiceMetrics, type MetricSources } from '../metrics/service-metrics';
import type { Services } from '../services/services';
import { createRequestRouter } from './entry-points';
import type { TaskStepFeeds } from '../domain/tasks/task-step-feeds';
import { EventStreams } from '../http/event-stream';

let server: Server | undefined;

afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
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
