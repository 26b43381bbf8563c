// Starting child processes without stopping the service.
//
// Node starts a child by forking the whole process, and the kernel copies the page tables
// of all of its memory while the event loop waits: 2 ms for a 49 MB process, 26 ms for the
// service's 350 MB, 69 ms at 1 GB. Every recording started an ffmpeg that way, in the
// first step of its task, ten at once on a busy host. The spawner is a small Node process
// of the service's own that forks in its place and hands back the child's stdin over its
// IPC channel (spawner-process.ts); the service pays a message.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { nodeBundle } from '../node-bundle.js';
import { isRunning } from '../processes.js';
import type { SpawnReport, SpawnRequest } from './spawner-protocol.js';

// How often the end of a child whose spawner died is looked for.
const PID_POLL_MS = 200;
const SPAWNER_SOURCE = fileURLToPath(new URL('./spawner-process.ts', import.meta.url));

/** How a child ended: its exit code or signal and the start of its stderr, or why that is not known. */
export type ChildEnd = { code: number | null; signal: string | null; stderr: string } | { error: string };

/** A child started by the spawner: its pid and its stdin to write. */
export interface PipedChild {
  readonly pid: number;
  readonly stdin: Socket;
  /** Resolves once, when the child exited (or the spawner died and nobody can tell). */
  readonly exited: Promise<ChildEnd>;
}

interface Pending {
  started: (child: PipedChild) => void;
  failed: (error: Error) => void;
  ended: (end: ChildEnd) => void;
  exited: Promise<ChildEnd>;
  pid?: number;
}

let spawnerCode: string | null = null;
let spawner: ChildProcess | null = null;
let nextId = 1;
const children = new Map<number, Pending>();

/** How a child is started. */
export interface SpawnOptions {
  /** Its scheduling niceness (0 to 19; higher gives way to more): background work. */
  niceness?: number;
}

/**
 * Starts `file` with `args` through the spawner, its stdin piped from this process,
 * stdout ignored and stderr kept for its end, with a clean environment (PATH only: none
 * of the service's secrets). Rejects when it could not be started.
 */
export function spawnPiped(file: string, args: string[], options: SpawnOptions = {}): Promise<PipedChild> {
  const id = nextId++;
  let ended!: (end: ChildEnd) => void;
  const exited = new Promise<ChildEnd>((resolve) => {
    ended = resolve;
  });
  return new Promise<PipedChild>((started, failed) => {
    children.set(id, { started, failed, ended, exited });
    const current = running();
    // Waiting for the child keeps this process running, as a child of its own would.
    current.channel?.ref();
    const request: SpawnRequest = { id, file, args, ...(options.niceness === undefined ? {} : { niceness: options.niceness }) };
    current.send(request);
  });
}

/**
 * Starts the spawner ahead of its first child: building its bundle blocks the event loop
 * (esbuild, hundreds of milliseconds on a loaded host) and its Node takes a moment to
 * start, which a service pays at its own start rather than in its first recording.
 */
export function startSpawner(): void {
  running();
}

function forget(id: number): void {
  children.delete(id);
  if (children.size === 0) spawner?.channel?.unref();
}

/** The spawner, started when the first child is asked for, and again should it have died. */
function running(): ChildProcess {
  if (spawner !== null) return spawner;
  spawnerCode ??= nodeBundle(SPAWNER_SOURCE);
  // Its first argument names this process, so it can tell when it is gone.
  const started = spawn(process.execPath, ['--no-warnings', '-e', spawnerCode, String(process.pid)], {
    cwd: '/',
    env: { PATH: '/usr/local/bin:/usr/bin:/bin' } as Record<string, string> as NodeJS.ProcessEnv,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  // It keeps the service running only while a child does (spawnPiped), and exits by
  // itself when the service's end of the channel closes.
  started.unref();
  started.channel?.unref();
  started.on('message', (message: SpawnReport, pipe: Socket | undefined) => receive(message, pipe));
  // Gone (or never started, or its channel broke): what it was starting fails, and what it
  // started runs on without it, ended when its pid is gone.
  let gone = false;
  const lost = () => {
    if (gone) return;
    gone = true;
    if (spawner === started) spawner = null;
    for (const [id, child] of children) {
      children.delete(id);
      child.failed(new Error('the spawner exited'));
      void untilGone(child.pid).then(() => child.ended({ error: 'the spawner exited before the child, so its exit status is unknown' }));
    }
  };
  started.once('exit', lost);
  started.on('error', lost);
  spawner = started;
  return started;
}

/**
 * Resolves once `pid` ended. Nobody is left to wait for it, so it may stay a zombie (a
 * PID 1 that does not reap): that counts as ended. No bound: the child's owner ends it
 * (an encoder's stdin closes, or its stop kills it).
 */
async function untilGone(pid: number | undefined): Promise<void> {
  if (pid === undefined) return;
  while (await isRunning(pid)) await new Promise((resolve) => setTimeout(resolve, PID_POLL_MS));
}

function receive(message: SpawnReport, pipe: Socket | undefined): void {
  const child = children.get(message.id);
  if (child === undefined) return;
  switch (message.type) {
    case 'stdin':
      child.pid = message.pid;
      child.started({ pid: message.pid, stdin: pipe!, exited: child.exited });
      return;
    case 'error':
      forget(message.id);
      child.failed(new Error(message.message));
      child.ended({ error: `could not start: ${message.message}` });
      return;
    case 'exit':
      forget(message.id);
      child.ended({ code: message.code, signal: message.signal, stderr: message.stderr });
  }
}
