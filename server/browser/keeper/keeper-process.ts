// A browser keeper: one detached process per device browser that holds the browser's
// DevTools connection (a local Chromium's --remote-debugging-pipe, or the WebSocket to a
// remote browser) so the browser outlives the service that started it. The service
// drives the browser through the keeper's Unix socket (keeper-protocol.ts), one client
// at a time; a restarted service connects again and finds the same pages. With no
// service connected for keepSecs, the keeper closes its browser and exits, and it exits
// when its browser dies: nothing is left behind by a service that never comes back.
//
// Run by the service as `node keeper-process-<hash>.cjs`, this code bundled by
// keeper-script.ts (node: imports only: the keeper runs with no packages), in a session of
// its own, reading its KeeperStart from stdin (the browserless token never appears in a
// command line or environment).
import { randomUUID } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, closeSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { CdpRelay } from './cdp-relay.ts';
import {
  CONTROL_PREFIX,
  WebSocketOpenError,
  type KeeperIdentity,
  type KeeperRequest,
  type KeeperStart,
  type KeeperStartResult,
  type LocalKeeperStart,
  type RemoteKeeperStart,
} from './keeper-protocol.ts';
import { NulFrameReader, nulFrame } from './nul-frames.ts';

/** The keeper's end of the browser's DevTools connection. */
interface BrowserLink {
  send(message: string): void;
  onmessage: (message: string) => void;
  onclose: () => void;
  /**
   * Ends the link: local, closes the browser for good (`discard`: killed without closing);
   * remote, leaves it. Resolves once the link is down.
   */
  shutDown(mode: ShutDownMode): Promise<void>;
}

type ShutDownMode = 'close' | 'discard' | 'release';

const GROUP_EXIT_WAIT_MS = 5_000;
const UID_CLAIM_FD = 3;

async function main(): Promise<void> {
  const start = JSON.parse(await readStdin()) as KeeperStart;
  const identity: KeeperIdentity = {
    deviceId: start.deviceId,
    incarnation: start.incarnation ?? randomUUID(),
    pid: null,
    uid: start.kind === 'local' ? start.uid : null,
    remoteBrowserId: start.kind === 'remote' ? start.remoteBrowserId : null,
    contextId: start.kind === 'remote' ? start.contextId : null,
    egressUrl: start.egressUrl,
  };
  // The socket first: a keeper that cannot serve must not have started a browser.
  const server = createServer();
  rmSync(start.socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(start.socketPath, () => resolve());
  });
  // Its folder is the service's alone (0700); the socket too, in case the folder ever is not.
  chmodSync(start.socketPath, 0o600);

  const relay = new CdpRelay();
  let link: BrowserLink;
  try {
    link = start.kind === 'local' ? launchChromium(start, identity, relay) : await connectRemote(start);
  } catch (error) {
    rmSync(start.socketPath, { force: true });
    const reason = error instanceof WebSocketOpenError ? error.reason : 'failed';
    report({ ready: false, reason, message: error instanceof Error ? error.message : String(error) });
    process.exit(1);
  }

  // A client hears the browser only once it said hello: events of the cleanup after the
  // previous client must not come before the hello's answer.
  let client: { number: number; socket: Socket; greeted: boolean } | null = null;
  let clients = 0;
  let reapTimer: NodeJS.Timeout | null = null;
  let ending: Promise<void> | null = null;

  const end = (mode: ShutDownMode | 'gone') => {
    ending ??= (async () => {
      if (reapTimer !== null) clearTimeout(reapTimer);
      server.close();
      rmSync(start.socketPath, { force: true });
      if (mode !== 'gone') await link.shutDown(mode).catch(() => undefined);
      // The browser's group is gone: its uid claim goes before the service hears of the end,
      // so the service can claim that uid again at once (browser-users.ts).
      if (start.kind === 'local' && start.uid !== null) closeClaim();
      // The client's socket closes with this process, not before it: the service's
      // closeBrowser() resolves on that close, once no keeper is left.
      process.exit(0);
    })();
  };
  const reapLater = () => {
    if (reapTimer !== null) clearTimeout(reapTimer);
    // A remote browser is only left: another host may have joined it (browserless closes it with its last client).
    reapTimer = setTimeout(() => end(start.kind === 'local' ? 'close' : 'release'), start.keepSecs * 1000);
  };

  link.onmessage = (message) => {
    const delivery = relay.fromBrowser(message);
    if (delivery.to === 'nobody' || client === null || !client.greeted) return;
    if (delivery.to === 'client' && delivery.client !== client.number) return;
    client.socket.write(nulFrame(delivery.message));
  };
  link.onclose = () => end('gone');

  const control = (current: { socket: Socket; greeted: boolean }, request: KeeperRequest) => {
    switch (request.keeper) {
      case 'hello':
        current.socket.write(nulFrame(JSON.stringify({ keeper: 'hello', ...identity })));
        current.greeted = true;
        return;
      case 'remember':
        identity.remoteBrowserId = request.remoteBrowserId;
        identity.contextId = request.contextId;
        return;
      case 'close':
      case 'discard':
      case 'release':
        end(request.keeper);
        return;
    }
  };

  server.on('connection', (socket) => {
    if (client !== null || ending !== null) {
      socket.end(nulFrame(JSON.stringify({ keeper: 'busy' })));
      return;
    }
    const current = { number: ++clients, socket, greeted: false };
    client = current;
    if (reapTimer !== null) clearTimeout(reapTimer);
    const reader = new NulFrameReader();
    socket.on('data', (chunk: Buffer) => {
      for (const message of reader.push(chunk)) {
        if (message.startsWith(CONTROL_PREFIX)) {
          control(current, JSON.parse(message) as KeeperRequest);
          continue;
        }
        const command = relay.fromClient(current.number, message);
        if (command !== null) link.send(command);
      }
    });
    socket.on('error', () => undefined);
    socket.once('close', () => {
      if (client !== current) return;
      client = null;
      if (ending !== null) return;
      for (const command of relay.clientGone(current.number)) link.send(command);
      reapLater();
    });
  });
  reapLater();
  report({ ready: true });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => end('close'));
}

/**
 * Chromium with its DevTools pipe on fds 3 (commands in) and 4 (messages out), leading
 * a process group of its own so the service's orphan and group kills still reach its
 * renderers. The command line and environment are the service's (chromium-command.ts).
 */
function launchChromium(start: LocalKeeperStart, identity: KeeperIdentity, relay: CdpRelay): BrowserLink {
  const chromium: ChildProcess = spawn(start.executablePath, [...start.args, '--remote-debugging-pipe'], {
    env: start.env as NodeJS.ProcessEnv,
    detached: true,
    stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'],
  });
  if (chromium.pid === undefined) throw new Error('Chromium did not start');
  const pid = chromium.pid;
  identity.pid = pid;
  const input = chromium.stdio[3] as NodeJS.WritableStream;
  const output = chromium.stdio[4] as NodeJS.ReadableStream;
  const reader = new NulFrameReader();
  const exited = new Promise<void>((resolve) => chromium.once('exit', () => resolve()));
  const link: BrowserLink = {
    send: (message) => {
      input.write(nulFrame(message));
    },
    onmessage: () => undefined,
    onclose: () => undefined,
    shutDown: async (mode) => {
      if (mode !== 'discard') {
        input.write(nulFrame(relay.internal('Browser.close')));
        await Promise.race([exited, delay(start.gracefulCloseMs)]);
      }
      await killGroup(pid);
    },
  };
  output.on('data', (chunk: Buffer) => {
    for (const message of reader.push(chunk)) link.onmessage(message);
  });
  (input as unknown as Socket).on('error', () => undefined);
  (output as unknown as Socket).on('error', () => undefined);
  void exited.then(async () => {
    // Renderers may outlive a crashed browser process: the group goes with it.
    await killGroup(pid);
    link.onclose();
  });
  return link;
}

async function connectRemote(start: RemoteKeeperStart): Promise<BrowserLink> {
  // Loaded by a remote browser's keeper only: node:http costs a keeper about 12 MB, and
  // a local browser's keeper (one per device) speaks to Chromium over a pipe.
  const { openWebSocket } = await import('./websocket-client.ts');
  const socket = await openWebSocket(start.endpoint, start.connectTimeoutMs);
  const closed = new Promise<void>((resolve) => {
    socket.onclose = () => {
      resolve();
      link.onclose();
    };
  });
  const link: BrowserLink = {
    send: (message) => socket.send(message),
    onmessage: () => undefined,
    onclose: () => undefined,
    // browserless closes the browser once its last client has gone; the service closed
    // the device's context before asking for a close.
    shutDown: async () => {
      socket.close();
      await closed;
    },
  };
  socket.onmessage = (message) => link.onmessage(message);
  return link;
}

/** SIGKILLs the process group `pid` leads and waits (bounded) until it is empty. */
async function killGroup(pid: number): Promise<void> {
  const deadline = Date.now() + GROUP_EXIT_WAIT_MS;
  while (Date.now() < deadline) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      return; // ESRCH: no member left
    }
    // Zombies still count as members until whoever inherited them reaps them (about a
    // second and a half after Chromium's exit here): they run nothing, so they are not waited for.
    if (!groupHasLiveMembers(pid)) return;
    await delay(25);
  }
}

/** Whether a process of group `groupId` still runs (is neither a zombie nor dead). */
function groupHasLiveMembers(groupId: number): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // After the parenthesised command name: state, ppid, pgrp.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] !== 'Z' && fields[0] !== 'X' && Number(fields[2]) === groupId) return true;
  }
  return false;
}

/** The uid claim's descriptor, inherited as fd 3 (keeper-launch.ts). */
function closeClaim(): void {
  try {
    closeSync(UID_CLAIM_FD);
  } catch {
    // already closed
  }
}

function report(result: KeeperStartResult): void {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

function readStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    process.stdin.on('data', (chunk: Buffer) => chunks.push(chunk));
    process.stdin.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.once('error', reject);
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

main().catch((error: unknown) => {
  report({ ready: false, reason: 'failed', message: error instanceof Error ? error.message : String(error) });
  process.exit(1);
});
