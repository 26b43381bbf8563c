import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

// A port for a server a test starts later: a service process, PostgreSQL, browserless.
//
// Not one the kernel picks with listen(0): those lie in the ephemeral range, which every
// listen(0) and every outgoing connection on the machine draws from, and a service
// process takes 5 to 20 s to bind its port on a loaded 2-core host. In that time the other
// test worker's page servers, browsers and connections took the port once, and the
// service exited with EADDRINUSE at its start and at every restart (CI, tasks-crash).
// Below (or above) the ephemeral range nobody hands out ports but this module: each vitest
// worker draws from a slice of its own, and a process never hands out a port twice.

const FIRST_PORT = 20_000;
const LAST_PORT = 65_535;
// More slices than the suite's workers, so that a benchmark or a script beside the suite
// (no VITEST_POOL_ID: slice 0) has one of its own too.
const SLICES = 8;

const handedOut = new Set<number>();

/** The ports outside the kernel's ephemeral range that this process may hand out. */
function ownSlice(): { first: number; size: number } {
  let [ephemeralFirst, ephemeralLast] = [32_768, 60_999];
  try {
    [ephemeralFirst, ephemeralLast] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number) as [number, number];
  } catch {
    // not Linux: the range Linux uses by default is as good a guess as any
  }
  const below = { first: FIRST_PORT, size: Math.max(0, ephemeralFirst - FIRST_PORT) };
  const above = { first: ephemeralLast + 1, size: Math.max(0, LAST_PORT - ephemeralLast) };
  const block = below.size >= above.size ? below : above;
  const size = Math.floor(block.size / SLICES);
  if (size === 0) throw new Error(`no ports outside the ephemeral range ${ephemeralFirst}-${ephemeralLast} to hand out`);
  const slice = Number(process.env.VITEST_POOL_ID ?? 0) % SLICES;
  return { first: block.first + slice * size, size };
}

function listenable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** A port nobody listens on now and no other test of this run will be given. */
export async function freePort(): Promise<number> {
  const { first, size } = ownSlice();
  // A random start: a run right after another does not meet the last one's ports.
  const start = Math.floor(Math.random() * size);
  for (let step = 0; step < size; step++) {
    const port = first + ((start + step) % size);
    if (handedOut.has(port) || !(await listenable(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port left between ${first} and ${first + size - 1}`);
}
