// The spawner (child-spawner.ts says why it exists): starts the processes the service
// asks for and hands their stdin back over its IPC channel. Node closes its own copy of a
// pipe once sent, so the service holds a child's stdin alone: when the service dies, even
// by SIGKILL, the child sees its input end, as if the service had started it itself.
import { spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import { setPriority } from 'node:os';
import type { SpawnReport, SpawnRequest } from './spawner-protocol';

// What is kept of a child's stderr: enough for an error's message.
const MAX_STDERR_CHARS = 4_000;
// How often the spawner looks whether the service that started it is still there.
const PARENT_CHECK_MS = 500;

function report(message: SpawnReport, pipe?: Socket): void {
  // Gone with the service: nothing left to tell.
  if (process.connected) process.send!(message, pipe);
}

process.on('message', (request: SpawnRequest) => {
  const child = spawn(request.file, request.args, { stdio: ['pipe', 'ignore', 'pipe'] });
  // At once, while the child is still loading: a process started as a background job
  // gives way to the ones the service answers for from its first instruction.
  if (request.niceness !== undefined && child.pid !== undefined) {
    try {
      setPriority(child.pid, request.niceness);
    } catch {
      // Gone already: its end is reported below.
    }
  }
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    if (stderr.length < MAX_STDERR_CHARS) stderr = (stderr + chunk.toString()).slice(0, MAX_STDERR_CHARS);
  });
  child.once('spawn', () => report({ id: request.id, type: 'stdin', pid: child.pid! }, child.stdin as Socket));
  child.once('error', (error) => report({ id: request.id, type: 'error', message: error.message }));
  // `close`, not `exit`: all it wrote on stderr has been read.
  child.once('close', (code, signal) => report({ id: request.id, type: 'exit', code, signal, stderr }));
});

// The service's end of the channel closed (it stopped or died): the children carry on
// until their input ends, with no one left to report to. 'disconnect' did not come to a
// spawner whose service was killed just after a request, the spawner still starting
// (seen in CI, and again by a test); a parent that is no longer the service says the same.
// The service names itself (the first argument): a spawner that starts after its death
// already has another parent.
process.once('disconnect', () => process.exit(0));
const service = Number(process.argv[1]);
setInterval(() => {
  if (process.ppid !== service) process.exit(0);
}, PARENT_CHECK_MS).unref();
