import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { expect, it } from 'vitest';
import { freePort } from './free-port';

it('hands out ports outside the ephemeral range, free, and never the same one twice', async () => {
  const [ephemeralFirst, ephemeralLast] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number) as [number, number];
  const ports: number[] = [];
  for (let index = 0; index < 100; index++) ports.push(await freePort());
  expect(new Set(ports).size).toBe(ports.length);
  for (const port of ports) expect(port < ephemeralFirst || port > ephemeralLast).toBe(true);
  // Each one can be listened on: the server a test starts on it would start.
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(ports[0], '127.0.0.1', resolve));
  await new Promise((resolve) => server.close(resolve));
});
