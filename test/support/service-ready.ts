import type { ChildProcess } from 'node:child_process';

/**
 * How long a started service may take to answer /readyz before its start counts as failed.
 * A loaded 2-core host took over 20 s to start the service (tsx compiling it, the
 * migrations); a test that went on before it listened saw ECONNREFUSED, not its subject.
 */
export const SERVICE_READY_WITHIN_MS = 90_000;

/**
 * Waits until `url` answers /readyz with 200: the service listens, applied its migrations
 * and reaches its database and browser provider. Fails at once when `child` (the service)
 * has exited, with `describe()`'s account of why, and after `timeoutMs`.
 */
export async function untilServiceReady(url: string, child: ChildProcess, timeoutMs: number, describe: () => string = () => ''): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const why = describe();
      throw new Error(`the service at ${url} exited with ${child.exitCode ?? child.signalCode} before it was ready${why === '' ? '' : `: ${why}`}`);
    }
    if (await fetch(`${url}/readyz`).then((response) => response.ok, () => false)) return;
    if (Date.now() > deadline) throw new Error(`the service at ${url} was not ready within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
