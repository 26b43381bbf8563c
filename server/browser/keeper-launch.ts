// Starting a browser keeper (keeper/keeper-process.ts): Node itself on the keeper's
// bundle (keeper-script.ts), detached into a session of its own so that neither a
// kill -9 of the service nor a signal to its process group reaches it, with a clean
// command line and environment: no loader, no NODE_OPTIONS, none of the service's
// secrets. Its start (with the browserless token) goes on its stdin.
import { spawn, type StdioOptions } from 'node:child_process';
import path from 'node:path';
import type { KeeperStart, KeeperStartFailure, KeeperStartResult } from './keeper/keeper-protocol.js';
import { keeperScript } from './keeper-script.js';

export class KeeperStartError extends Error {
  constructor(
    readonly reason: KeeperStartFailure,
    message: string,
  ) {
    super(message);
    this.name = 'KeeperStartError';
  }
}

/**
 * Starts a keeper and waits until it serves its socket. `lockFd`: the browser's uid
 * claim (browser-users.ts), inherited as the keeper's fd 3 so the claim lives as long as
 * the keeper, whatever becomes of the service.
 */
export async function startKeeper(start: KeeperStart, lockFd: number | null, timeoutMs: number): Promise<void> {
  // Beside the keeper's socket: in the keepers' folder.
  const script = await keeperScript(path.dirname(start.socketPath));
  const stdio: StdioOptions = lockFd === null ? ['pipe', 'pipe', 'ignore'] : ['pipe', 'pipe', 'ignore', lockFd];
  const child = spawn(process.execPath, ['--no-warnings', script], {
    cwd: '/',
    env: { PATH: '/usr/local/bin:/usr/bin:/bin' } as Record<string, string> as NodeJS.ProcessEnv,
    detached: true,
    stdio,
  });
  // A keeper that died at once closes its stdin: its exit says why, not this write.
  child.stdin!.on('error', () => undefined);
  child.stdin!.end(JSON.stringify(start));
  return new Promise<void>((resolve, reject) => {
    let output = '';
    const finish = (error: KeeperStartError | null) => {
      clearTimeout(timer);
      child.stdout!.destroy();
      child.removeAllListeners();
      child.unref();
      if (error === null) resolve();
      else reject(error);
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish(new KeeperStartError('timeout', `the browser keeper of ${start.deviceId} did not start within ${timeoutMs} ms`));
    }, timeoutMs);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const newline = output.indexOf('\n');
      if (newline === -1) return;
      let result: KeeperStartResult;
      try {
        result = JSON.parse(output.slice(0, newline)) as KeeperStartResult;
      } catch {
        result = { ready: false, reason: 'failed', message: 'the browser keeper wrote something unexpected' };
      }
      finish(result.ready ? null : new KeeperStartError(result.reason, result.message));
    });
    child.once('error', (error) => finish(new KeeperStartError('failed', `the browser keeper could not be started: ${error.message}`)));
    child.once('exit', (code) => finish(new KeeperStartError('failed', `the browser keeper of ${start.deviceId} exited (${code}) before it was ready`)));
  });
}
