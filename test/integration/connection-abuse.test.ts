import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServiceProcess, type ServiceProcess } from '../support/service-process';

// What clients can do to the service's connections, without a credential. A client that
// resets its connection in the middle of a WebSocket handshake, while its credential is
// being checked or as the refusal is written, leaves the service running: Node takes its
// own error listener off a socket it hands over as an upgrade, and an 'error' nobody heard
// ended the process. And connections are bounded (OPERATOR_MAX_CONNECTIONS): a flood of
// idle ones is closed past the limit, and the service serves again once they go. The
// service runs in a process of its own, so that its end is what the test sees.

const SOCKET_PATHS = ['/v1/cdp_sessions/cdp_00000000-0000-0000-0000-000000000000/devtools?token=wrong', '/v1/sessions/ses_00000000-0000-0000-0000-000000000000/ws'];
const RESETS = 60;
const MAX_CONNECTIONS = 20;

let service: ServiceProcess;
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'operator-connection-abuse-'));
  // Every handshake here fails authentication: the throttle must not answer them 429 instead.
  service = await startServiceProcess({ OPERATOR_DATA_DIR: dataDir, OPERATOR_AUTH_FAILURE_LIMIT: '100000', OPERATOR_MAX_CONNECTIONS: String(MAX_CONNECTIONS) }, { log: 'discard' });
});
afterAll(async () => {
  await service?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

/** Sends a handshake for `socketPath`, then resets the connection after `afterMs` (RST, not FIN), or reads the whole answer when null. */
function handshake(socketPath: string, afterMs: number | null): Promise<string> {
  const { port } = new URL(service.url);
  return new Promise((resolve) => {
    let answer = '';
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(
        `GET ${socketPath} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n` +
          'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: svc.operator.v1, svc.token.wrong\r\n\r\n',
      );
      if (afterMs !== null) {
        setTimeout(() => {
          socket.resetAndDestroy();
          resolve('');
        }, afterMs);
      }
    });
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('error', () => resolve(answer));
    socket.on('close', () => resolve(answer));
  });
}

it('keeps serving after clients reset their WebSocket handshakes midway, on both socket paths', async () => {
  const pid = service.pid;
  for (let i = 0; i < RESETS; i += 1) await handshake(SOCKET_PATHS[i % 2]!, i % 5);
  // Long enough for every refusal to have been written to its reset socket.
  await new Promise((resolve) => setTimeout(resolve, 500));

  expect(() => process.kill(pid, 0)).not.toThrow();
  expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
  for (const socketPath of SOCKET_PATHS) expect(await handshake(socketPath, null)).toMatch(/^HTTP\/1\.1 401 /);
});

it(`closes connections past OPERATOR_MAX_CONNECTIONS unanswered, and serves again once they go`, async () => {
  const { port } = new URL(service.url);
  // Idle connections that never finish their request head.
  const idle = await Promise.all(
    Array.from({ length: MAX_CONNECTIONS + 10 }, () =>
      new Promise<{ closed: boolean; socket: import('node:net').Socket }>((resolve) => {
        const held = { closed: false, socket: connect(Number(port), '127.0.0.1', () => {
          held.socket.write('GET /healthz HTTP/1.1\r\n');
          resolve(held);
        }) };
        held.socket.on('close', () => (held.closed = true));
        held.socket.on('error', () => undefined);
      }),
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, 500));
  const open = idle.filter((held) => !held.closed).length;
  expect(open).toBeLessThanOrEqual(MAX_CONNECTIONS);
  // The rest were closed by the server, unanswered, not left waiting.
  expect(idle.length - open).toBeGreaterThanOrEqual(10);
  for (const held of idle) held.socket.destroy();
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
});
