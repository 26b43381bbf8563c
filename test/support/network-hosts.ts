// "Hosts" for tests that must not run every instance on one loopback: each host is a Linux
// network namespace with its own loopback and one address on a private /24, joined to the
// others by veth pairs on a bridge in the test runner's (root) namespace, where the runner
// has an address of its own on the same network to reach them. Nothing routes further:
// the namespaces have no default route and ip_forward is left as it is, so their traffic
// goes to their own loopback, to each other and to the runner, nowhere else.
//
// Names carry the test process's pid, so parallel test files never share one and a later
// run can tell which leftovers belong to a test process that died (removeLeftovers).
import { execFile, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from './service-process';

const run = promisify(execFile);

/** Where `ip netns exec` finds a namespace's own resolv.conf and hosts. */
const NETNS_ETC = '/etc/netns';

/** Namespaces are `<NAMESPACE_PREFIX><pid>-<network>-<host>`. */
const NAMESPACE_PREFIX = 'opht-';
/** Bridges are `ohb<pid>n<network>`, the runner-side veth ends `ohv<pid>n<network>h<host>`. */
const LINK_PATTERN = /^oh[bv](\d+)n\d+/;
/** Linux's limit on an interface name (IFNAMSIZ less the NUL). */
const MAX_INTERFACE_NAME = 15;
/** The /24s the helper picks from: 10.213.0.0/16. */
const SUBNET_BASE = '10.213';

export interface NetworkHost {
  /** The label it was made with, e.g. "postgres". */
  readonly label: string;
  readonly namespace: string;
  /** Its address on the network, which the runner and the other hosts reach it at. */
  readonly address: string;
  /** Spawns `command` inside the host (`ip netns exec` execs it: the child's pid is the command's own). */
  spawn(command: string, args: string[], options?: SpawnOptions): ChildProcess;
  /**
   * Names are resolved by the name server at `address` in this host: `ip netns exec` puts
   * `/etc/netns/<namespace>/resolv.conf` (and `hosts`) in place of /etc's for what it
   * starts, so call it before starting anything that resolves.
   */
  useNameServer(address: string): Promise<void>;
}

export interface HostNetwork {
  /** The runner's own address on the network (the bridge's), e.g. for a server the hosts call back. */
  readonly runnerAddress: string;
  /** The network in CIDR form, e.g. 10.213.7.0/24. */
  readonly cidr: string;
  addHost(label: string): Promise<NetworkHost>;
  /** Kills whatever still runs in the hosts, then removes the namespaces, veths and bridge. */
  remove(): Promise<void>;
}

let networksMade = 0;

/**
 * Why hosts cannot be made here, or null when they can: root, `ip` present, and a
 * namespace actually made and removed. For `describe.skipIf(...)` with the reason shown.
 */
export async function networkNamespacesUnavailable(): Promise<string | null> {
  if (process.getuid?.() !== 0) return 'network namespaces need root (ip netns add)';
  const probe = `${NAMESPACE_PREFIX}${process.pid}-probe`;
  try {
    await ip('netns', 'add', probe);
  } catch (error) {
    return `ip netns add failed: ${(error as Error).message.trim()}`;
  }
  await ip('netns', 'delete', probe).catch(() => undefined);
  return null;
}

/** An empty network, its bridge up with the runner's address; hosts are added to it. */
export async function createHostNetwork(): Promise<HostNetwork> {
  await removeLeftovers();
  networksMade += 1;
  const tag = `${process.pid}n${networksMade}`;
  const bridge = interfaceName(`ohb${tag}`);
  const subnet = await freeSubnet();
  const runnerAddress = `${subnet}.1`;
  await ip('link', 'add', bridge, 'type', 'bridge');
  const hosts: Array<{ namespace: string; children: ChildProcess[] }> = [];
  try {
    await ip('addr', 'add', `${runnerAddress}/24`, 'dev', bridge);
    await ip('link', 'set', bridge, 'up');
  } catch (error) {
    await ip('link', 'delete', bridge).catch(() => undefined);
    throw error;
  }

  return {
    runnerAddress,
    cidr: `${subnet}.0/24`,
    async addHost(label) {
      const index = hosts.length + 1;
      if (index > 250) throw new Error('a host network holds at most 250 hosts');
      const namespace = `${NAMESPACE_PREFIX}${tag.replace('n', '-')}-${index}`;
      const outside = interfaceName(`ohv${tag}h${index}`);
      const address = `${subnet}.${index + 1}`;
      const children: ChildProcess[] = [];
      await ip('netns', 'add', namespace);
      hosts.push({ namespace, children });
      // The pair's inner end is made inside the namespace, where it may be called eth0.
      await ip('link', 'add', outside, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', namespace);
      await ip('link', 'set', outside, 'master', bridge);
      await ip('link', 'set', outside, 'up');
      await ip('-n', namespace, 'addr', 'add', `${address}/24`, 'dev', 'eth0');
      await ip('-n', namespace, 'link', 'set', 'eth0', 'up');
      await ip('-n', namespace, 'link', 'set', 'lo', 'up');
      return {
        label,
        namespace,
        address,
        spawn(command, args, options = {}) {
          const child = spawn('ip', ['netns', 'exec', namespace, command, ...args], options);
          children.push(child);
          return child;
        },
        async useNameServer(nameServer) {
          const folder = path.join(NETNS_ETC, namespace);
          await mkdir(folder, { recursive: true });
          await writeFile(path.join(folder, 'resolv.conf'), `nameserver ${nameServer}\n`);
          await writeFile(path.join(folder, 'hosts'), '127.0.0.1 localhost\n::1 localhost\n');
        },
      };
    },
    async remove() {
      for (const { namespace } of hosts) await removeNamespace(namespace);
      await ip('link', 'delete', bridge).catch(() => undefined);
    },
  };
}

/**
 * Removes the namespaces and links of test processes that died without removing them
 * (their pid is in the name); those of live processes, this one's included, are left.
 */
async function removeLeftovers(): Promise<void> {
  const { stdout: namespaces } = await ip('netns', 'list');
  for (const line of namespaces.split('\n')) {
    const name = line.split(' ')[0] ?? '';
    const pid = new RegExp(`^${NAMESPACE_PREFIX}(\\d+)-`).exec(name)?.[1];
    if (pid !== undefined && !isAlive(Number(pid))) await removeNamespace(name);
  }
  const { stdout: links } = await ip('-o', 'link', 'show');
  for (const line of links.split('\n')) {
    // "12: ohv123n1h1@if2: <...>": the name ends at the "@" of a veth, or the colon.
    const name = /^\d+: ([^:@]+)/.exec(line)?.[1] ?? '';
    const pid = LINK_PATTERN.exec(name)?.[1];
    if (pid !== undefined && !isAlive(Number(pid))) await ip('link', 'delete', name).catch(() => undefined);
  }
}

/** Kills every process in the namespace (SIGKILL; `ip netns pids` lists them), then deletes it, and its veth with it. */
async function removeNamespace(namespace: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { stdout } = await ip('netns', 'pids', namespace).catch(() => ({ stdout: '' }));
    const pids = stdout.split('\n').filter((pid) => pid !== '').map(Number);
    if (pids.length === 0) break;
    if (Date.now() > deadline) throw new Error(`processes in ${namespace} would not die: ${pids.join(', ')}`);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await ip('netns', 'delete', namespace).catch(() => undefined);
  await rm(path.join(NETNS_ETC, namespace), { recursive: true, force: true });
}

/** The first 10.213.<n> (from the pid's, onwards) no interface of this machine has an address in. */
async function freeSubnet(): Promise<string> {
  const { stdout } = await ip('-o', '-4', 'addr', 'show');
  const taken = new Set([...stdout.matchAll(/inet (\d+\.\d+\.\d+)\.\d+\//g)].map((match) => match[1]));
  for (let offset = 0; offset < 250; offset += 1) {
    const subnet = `${SUBNET_BASE}.${((process.pid + offset) % 250) + 1}`;
    if (!taken.has(subnet)) return subnet;
  }
  throw new Error(`no free /24 left in ${SUBNET_BASE}.0.0/16`);
}

function interfaceName(name: string): string {
  if (name.length > MAX_INTERFACE_NAME) throw new Error(`interface name ${name} is longer than ${MAX_INTERFACE_NAME} characters`);
  return name;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function ip(...args: string[]): Promise<{ stdout: string }> {
  return run('ip', args);
}

/** A TypeScript script of the project running in a host, which announced itself with one line. */
export interface HostScript {
  /** The first line it printed (what it announces: a port, a URL). */
  readonly announced: string;
  /** Sends `signal` and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Runs `node --import tsx <script> ...args` (the script's path from the project's root) in `host` and waits (up to `timeoutMs`) for the
 * first line it prints: for servers a test would otherwise run in its own process, which
 * must listen on the host's address instead (s3rver, PostgreSQL).
 */
export async function runScriptInHost(host: NetworkHost, script: string, args: string[], timeoutMs = 60_000): Promise<HostScript> {
  const child = host.spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  const announced = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} in ${host.label} announced nothing within ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4_000);
    };
    child.stderr!.on('data', collect);
    let printed = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      collect(chunk);
      printed += chunk.toString();
      const newline = printed.indexOf('\n');
      if (newline >= 0) {
        clearTimeout(timer);
        resolve(printed.slice(0, newline));
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`${script} in ${host.label} exited before it announced itself:\n${output}`));
    });
  });
  return {
    announced,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/**
 * A name server in `host` (test/support/dns-server-process.ts) answering `zone`'s names
 * with their IPv4 addresses, in the order given: an internal DNS zone for hosts told to
 * use it (`useNameServer(host.address)`).
 */
export async function startNameServer(host: NetworkHost, zone: Record<string, string[]>): Promise<HostScript> {
  return runScriptInHost(host, 'test/support/dns-server-process.ts', [host.address, ...Object.entries(zone).map(([name, addresses]) => `${name}=${addresses.join(',')}`)]);
}
