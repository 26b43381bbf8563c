import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTRPCClient, httpLink } from '@trpc/client';
import { eq } from 'drizzle-orm';
import puppeteer from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { connectDatabase, type Database } from '../../db/client';
import { applyMigrations } from '../../db/migrate';
import { hosts } from '../../db/schema';
import type { ConsoleAppRouter } from '../../server/console/console-router';
import { parsePublicId } from '../../server/domain/ids';
import { scopes } from '../../server/domain/keys/scopes';
import { createApiKey, createOrganization, createSpace } from '../../server/domain/orgs/operator-admin';
import { startBrowserlessServer, type BrowserlessServer } from '../support/browserless-server';
import { freePort } from '../support/free-port';
import { startHostProcess, type HostProcess } from '../support/host-process';
import { apiClient, type ApiCall } from '../support/http';
import { createHostNetwork, networkNamespacesUnavailable, startNameServer, type HostNetwork, type HostScript, type NetworkHost } from '../support/network-hosts';
import { startOwnedPostgres, type OwnedPostgres } from '../support/owned-postgres';
import { startS3Server } from '../support/s3-server';
import { deviceHostOf, readStream, stepActionsOf, waitForTaskEnd } from '../support/task-helpers';
import { startTaskPages, type TaskPages } from '../support/task-pages';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

// Two instances (A, B) on hosts of their own, browserless, PostgreSQL and S3 (s3rver) on
// three more, the task pages and the escalation receiver on the runner's address: every
// path between instances, and from an instance to the browser, goes over a network
// between separate loopbacks, so nothing works only because the other end is on
// 127.0.0.1. Each test proves one path: live view and CDP relayed from B to A's device,
// A's recording and screenshots served by B, a rate limit spent through A refused by B,
// an answer link delivered by A answered through B, and A killed with its devices adopted
// by B. And the egress policy across hosts: the remote browser goes through its
// instance's egress proxy on that instance's internal address, admitted by its device's
// credential, so its pages reach neither the browser host's loopback, nor the service
// host's address, nor metadata; nothing else on the network may use the proxy. Instances
// refuse to start where no such address exists. A's and B's proxies share a name in the
// zone of the test's name server, so A's devices keep their network once B adopted them.
// One harness for the file.

const unavailable = await networkNamespacesUnavailable();

/** 5 s windows of 100 requests: a poll at 10/s stays under it, a burst through A spends it. */
const RATE_LIMIT = { perSecond: 20, burst: 100 };

let network: HostNetwork;
/** Instance A's host, where another instance may be tried too. */
let hostA: NetworkHost;
/** The host of an instance with the default egress policy. */
let hostC: NetworkHost;
let browserlessHost: NetworkHost;
let nameServer: HostScript;
/** The name and port every instance's egress proxy shares (A's and B's). */
const SHARED_PROXY = { host: 'egress.test', port: 3128 };
let postgresServer: OwnedPostgres;
let s3: Awaited<ReturnType<typeof startS3Server>>;
let browserless: BrowserlessServer;
let pages: TaskPages;
let receiver: WebhookReceiver;
let db: Database;
let spaceId: string;
let orgId: string;
let key: string;
interface Instance {
  host: HostProcess;
  api: ApiCall;
  /** Its host id, as devices.host_id names it. */
  hostId: string;
  dataDir: string;
}
let a: Instance;
let b: Instance;
const dataDirs: string[] = [];

async function startInstance(host: NetworkHost, env: Record<string, string> = {}): Promise<Instance> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'operator-multi-host-'));
  dataDirs.push(dataDir);
  const port = await freePort();
  const started = await startHostProcess({
    host,
    databaseUrl: postgresServer.url,
    dataDir,
    port,
    env: {
      OPERATOR_BROWSER: 'browserless',
      BROWSERLESS_URL: browserless.url,
      OPERATOR_INTERNAL_URL: `http://${host.address}:${port}`,
      OPERATOR_STORAGE_URL: s3.storageUrl('operator'),
      OPERATOR_RATE_LIMIT_STORE: 'postgres',
      OPERATOR_RATE_LIMIT_PER_SEC: String(RATE_LIMIT.perSecond),
      OPERATOR_RATE_LIMIT_BURST: String(RATE_LIMIT.burst),
      // The pages are on the runner's private address.
      OPERATOR_ALLOW_PRIVATE_DESTINATIONS: 'true',
      OPERATOR_TASK_LEASE_SECS: '3',
      // Long enough for B to join A's browsers once A is killed, short enough that nothing
      // of A outlives the file (the namespaces' removal kills the rest).
      OPERATOR_BROWSER_KEEP_SECS: '40',
      ...env,
    },
  });
  const [registered] = await db.db.select({ hostId: hosts.hostId }).from(hosts).where(eq(hosts.internalUrl, `http://${host.address}:${port}`));
  return { host: started, api: apiClient(started.url, key), hostId: registered!.hostId, dataDir };
}

/** A server on `address` inside `host` that answers a secret and counts who asked: what no device may reach. */
async function hitCountingServer(host: NetworkHost, address: string): Promise<{ url: string; hits: () => number; stop: () => void }> {
  const port = 8089;
  const script = `require('node:http').createServer((req, res) => { console.log('hit'); res.end('<title>SECRET</title>'); }).listen(${port}, '${address}', () => console.log('listening'));`;
  const child = host.spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let hits = 0;
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the secret server in ${host.label} exited with ${code}`)));
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (text: string) => {
      hits += text.split('\n').filter((line) => line === 'hit').length;
      if (text.includes('listening')) resolve();
    });
  });
  return { url: `http://${address}:${port}/secret`, hits: () => hits, stop: () => child.kill('SIGKILL') };
}

/** The status the proxy at `proxy` answers a GET of `target` sent from inside `host`. */
async function proxiedStatusFrom(host: NetworkHost, proxy: string, target: string, authorization: string | null): Promise<number> {
  const [proxyHost, proxyPort] = proxy.split(':');
  const headers = { Host: new URL(target).host, ...(authorization === null ? {} : { 'Proxy-Authorization': authorization }) };
  const script = `require('node:http').request({ host: '${proxyHost}', port: ${proxyPort}, path: '${target}', headers: ${JSON.stringify(headers)} }, (res) => { console.log(res.statusCode); process.exit(0); }).on('error', (error) => { console.log(error.code); process.exit(0); }).end();`;
  const child = host.spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (text: string) => (output += text));
  await new Promise((resolve) => child.once('exit', resolve));
  return Number(output.trim());
}

describe.skipIf(unavailable !== null)(`instances on hosts of their own${unavailable === null ? '' : ` (skipped: ${unavailable})`}`, () => {
  beforeAll(async () => {
    network = await createHostNetwork();
    const postgresHost = await network.addHost('postgres');
    const s3Host = await network.addHost('s3');
    browserlessHost = await network.addHost('browserless');
    hostA = await network.addHost('a');
    const hostB = await network.addHost('b');
    hostC = await network.addHost('c');
    // The internal zone: `egress.test` names A's and B's egress proxies (same port on both),
    // as a deployment's DNS would name every instance's; the browser host resolves with it.
    const dnsHost = await network.addHost('dns');
    nameServer = await startNameServer(dnsHost, { [SHARED_PROXY.host]: [hostA.address, hostB.address] });
    await browserlessHost.useNameServer(dnsHost.address);
    [postgresServer, s3, browserless, pages, receiver] = await Promise.all([
      startOwnedPostgres({ host: postgresHost }),
      startS3Server('artifacts', { host: s3Host }),
      startBrowserlessServer({ concurrent: 4, queued: 0, host: browserlessHost }),
      startTaskPages(network.runnerAddress),
      startWebhookReceiver(undefined, network.runnerAddress),
    ]);
    db = connectDatabase(postgresServer.url, 2);
    await applyMigrations(db);
    ({ org_id: orgId } = await createOrganization(db.db, { name: 'Hosts', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: receiver.url }));
    ({ space_id: spaceId } = await createSpace(db.db, orgId, 'default'));
    key = await newKey();
    const sharedProxy = { OPERATOR_EGRESS_PROXY_HOST: SHARED_PROXY.host, OPERATOR_EGRESS_PROXY_PORT: String(SHARED_PROXY.port) };
    [a, b] = await Promise.all([startInstance(hostA, sharedProxy), startInstance(hostB, sharedProxy)]);
  }, 120_000);

  afterAll(async () => {
    for (const instance of [a, b]) await instance?.host.stop('SIGINT');
    await browserless?.stop();
    await db?.close();
    await postgresServer?.remove();
    await s3?.close();
    await receiver?.close();
    await pages?.close();
    await nameServer?.stop();
    await network?.remove();
    for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
  });

  async function newKey(): Promise<string> {
    return (await createApiKey(db.db, { orgId, scopes: [...scopes], spaceIds: [], env: 'test' })).key;
  }

  async function deviceOnA(): Promise<string> {
    const created = await a.api('POST', '/v1/devices', { space_id: spaceId });
    expect(created.status).toBe(201);
    expect(await deviceHostOf(db.db, created.body.id)).toBe(a.hostId);
    return created.body.id;
  }

  it('refuses to start with browserless on another host and no internal address for its egress proxy', async () => {
    // The remote browser could not reach this service's egress proxy: its pages would
    // reach the browser host's loopback and the private network. Refused, saying why.
    await expect(startInstance(hostA, { OPERATOR_INTERNAL_URL: '' })).rejects.toThrow(/exited with 1 before it was ready: .*OPERATOR_EGRESS_PROXY_HOST.*OPERATOR_EGRESS_ENFORCED_ELSEWHERE=true/s);
  });

  it("holds a device on the browser host to the egress policy, through the service's proxy, which admits only devices", async () => {
    // Default egress, but for the one page the device is to load.
    const pagesAddress = new URL(pages.url('/plain'));
    const c = await startInstance(hostC, { OPERATOR_ALLOW_PRIVATE_DESTINATIONS: 'false', OPERATOR_TEST_ALLOW_DESTINATIONS: pagesAddress.host });
    const secrets = await Promise.all([hitCountingServer(browserlessHost, '127.0.0.1'), hitCountingServer(hostC, hostC.address)]);
    try {
      const device = (await c.api('POST', '/v1/devices', { space_id: spaceId })).body.id;
      const run = async (target: string) => {
        const submitted = await c.api('POST', `/v1/devices/${device}/tasks`, { prompt: `go to ${target} then return the title` });
        expect(submitted.status).toBe(202);
        return waitForTaskEnd(c.api, submitted.body.id);
      };
      // Admitted with its credential: the allowed page loads.
      expect(await run(pages.url('/plain'))).toMatchObject({ status: 'succeeded', result: 'Plain' });
      for (const target of [...secrets.map((secret) => secret.url), 'http://169.254.169.254/latest/meta-data/']) {
        expect({ target, ...(await run(target)) }).toMatchObject({ target, status: 'failed', result: { error: 'destination_blocked' } });
      }
      expect(secrets.map((secret) => secret.hits())).toEqual([0, 0]);

      // Anyone else on the network: refused by the proxy, with or without a made-up credential.
      const proxy = `${hostC.address}:${(await readFile(path.join(c.dataDir, 'egress-port'), 'utf8')).trim()}`;
      const forged = `Basic ${Buffer.from(`${parsePublicId('device', device)}:guessed`).toString('base64')}`;
      for (const authorization of [null, forged]) {
        expect(await proxiedStatusFrom(browserlessHost, proxy, pages.url('/plain'), authorization)).toBe(407);
      }
      await c.api('DELETE', `/v1/devices/${device}`);
    } finally {
      for (const secret of secrets) secret.stop();
      await c.host.stop('SIGINT');
    }
  });

  it('relays a live view through B to the device A holds: frames arrive', async () => {
    const device = await deviceOnA();
    const session = (await a.api('POST', `/v1/devices/${device}/sessions`, {})).body;
    const socket = new WebSocket(`${b.host.url.replace('http', 'ws')}${new URL(session.ws_url).pathname}`, ['svc.operator.v1', `svc.token.${session.session_token}`]);
    try {
      const types: string[] = [];
      await new Promise<void>((resolve, reject) => {
        socket.on('message', (data) => {
          types.push(JSON.parse(data.toString()).type);
          if (types.includes('frame')) resolve();
        });
        socket.on('unexpected-response', (_request, response) => reject(new Error(`refused with ${response.statusCode}`)));
        socket.on('error', reject);
        setTimeout(() => reject(new Error(`no frame within 20 s (got ${types.join(', ')})`)), 20_000);
      });
      expect(types[0]).toBe('ready');
    } finally {
      socket.close();
      await a.api('DELETE', `/v1/devices/${device}`);
    }
  });

  it("drives A's device with a CDP client connected through B", async () => {
    const device = await deviceOnA();
    const session = (await a.api('POST', `/v1/devices/${device}/cdp`, {})).body;
    const cdpUrl = new URL(session.cdp_url);
    const browser = await puppeteer.connect({ browserWSEndpoint: `${b.host.url.replace('http', 'ws')}${cdpUrl.pathname}${cdpUrl.search}`, defaultViewport: null });
    try {
      const page = await browser.newPage();
      await page.goto(pages.url('/plain'));
      expect(await page.title()).toBe('Plain');
    } finally {
      await browser.disconnect();
      await a.api('DELETE', `/v1/cdp_sessions/${session.id}`);
      await a.api('DELETE', `/v1/devices/${device}`);
    }
  });

  it("serves through B the recording and screenshots of a task run on A's device", async () => {
    const device = await deviceOnA();
    const submitted = await a.api('POST', `/v1/devices/${device}/tasks`, {
      prompt: `go to ${pages.url('/late?ms=800')} then wait for "Arrived at last" then return the title`,
    });
    expect(submitted.status).toBe(202);
    expect(await waitForTaskEnd(a.api, submitted.body.id)).toMatchObject({ status: 'succeeded', result: 'Late' });

    const read = async (base: string, route: string) => {
      const response = await fetch(`${base}${route}`, { headers: { Authorization: `Bearer ${key}` } });
      return { status: response.status, type: response.headers.get('content-type'), bytes: Buffer.from(await response.arrayBuffer()) };
    };
    const recording = `/v1/tasks/${submitted.body.id}/recording`;
    const [onA, onB] = [await read(a.host.url, recording), await read(b.host.url, recording)];
    expect([onA.status, onB.status, onB.type]).toEqual([200, 200, 'video/mp4']);
    expect(onB.bytes.equals(onA.bytes)).toBe(true);

    const steps = (await readStream(`${b.host.url}/v1/tasks/${submitted.body.id}/events`, key)).frames.filter((frame) => frame.event === 'step');
    expect(steps.length).toBeGreaterThan(0);
    const { seq } = JSON.parse(steps[0]!.data!);
    const screenshot = await read(b.host.url, `/v1/tasks/${submitted.body.id}/steps/${seq}/screenshot`);
    expect(screenshot.status).toBe(200);
    expect(screenshot.bytes.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    await a.api('DELETE', `/v1/devices/${device}`);
  });

  it("reports destination_blocked for B's device, whose browser reached A's proxy by the shared name", async () => {
    const created = await b.api('POST', '/v1/devices', { space_id: spaceId });
    expect(await deviceHostOf(db.db, created.body.id)).toBe(b.hostId);
    // The zone answers A's address first: the browser goes through A's proxy, which
    // refuses the metadata address; B, driving the task, never saw that refusal itself.
    const submitted = await b.api('POST', `/v1/devices/${created.body.id}/tasks`, { prompt: 'go to http://169.254.169.254/latest/meta-data/ then return the title' });
    expect(await waitForTaskEnd(b.api, submitted.body.id)).toMatchObject({ status: 'failed', result: { error: 'destination_blocked' } });
    await b.api('DELETE', `/v1/devices/${created.body.id}`);
  });

  it('refuses through B a key that spent its rate limit through A', async () => {
    const spender = await newKey();
    const [throughA, throughB] = [apiClient(a.host.url, spender), apiClient(b.host.url, spender)];
    // The whole burst at once, in a few rounds, until A refuses.
    let refusedByA = false;
    for (let round = 0; round < 5 && !refusedByA; round += 1) {
      const statuses = await Promise.all(Array.from({ length: RATE_LIMIT.burst / 2 }, async () => (await throughA('GET', '/v1/whoami')).status));
      refusedByA = statuses.includes(429);
    }
    expect(refusedByA).toBe(true);
    const refused = await throughB('GET', '/v1/whoami');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('answers through B the answer link A delivered, and A finishes the task', async () => {
    const device = await deviceOnA();
    const before = receiver.received.length;
    const submitted = await a.api('POST', `/v1/devices/${device}/tasks`, { prompt: `go to ${pages.url('/echo')} then ask a human "Your name?" then return the title` });
    expect(submitted.status).toBe(202);
    await waitForTaskEnd(a.api, submitted.body.id, 30_000, ['needs_human']);
    const [received] = (await receiver.waitFor(before + 1, 20_000)).slice(before);
    const delivery = JSON.parse(received!.rawBody.toString('utf8'));
    const escalationId: string = delivery.escalation.id;
    const secret = new URL(delivery.answer_url).hash.slice(1);

    const access = { token: null as string | null };
    const page = createTRPCClient<ConsoleAppRouter>({
      links: [
        httpLink({
          url: `${b.host.url}/console/api`,
          headers: () => ({ 'x-svc-console': '1', ...(access.token === null ? {} : { 'x-svc-answer-access': access.token }) }),
        }),
      ],
    });
    access.token = (await page.openAnswerLink.mutate({ escalation_id: escalationId, secret })).access_token;
    expect(await page.answerEscalation.mutate({ escalation_id: escalationId, answer: 'Ada', cleared: true })).toMatchObject({ applied: true, status: 'resolved' });
    expect(await waitForTaskEnd(a.api, submitted.body.id, 30_000)).toMatchObject({ status: 'succeeded', result: 'Echo' });
    await a.api('DELETE', `/v1/devices/${device}`);
  });

  // Last: it kills A.
  it("has B adopt a killed A's devices within 30 s and finish the task on the same page", async () => {
    const device = await deviceOnA();
    const running = await a.api('POST', `/v1/devices/${device}/tasks`, {
      prompt: `go to ${pages.url('/gated?name=adoption')} then type "kept-state" into "#field" then wait for "Gate open" then return the text of "#echo"`,
    });
    expect(running.status).toBe(202);
    const typedBy = Date.now() + 30_000;
    while (!(await stepActionsOf(db.db, running.body.id)).some((action) => action.startsWith('type'))) {
      if (Date.now() > typedBy) throw new Error('the task never typed');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    await a.host.stop('SIGKILL');
    const killedAt = Date.now();
    while ((await deviceHostOf(db.db, device)) !== b.hostId) {
      if (Date.now() - killedAt > 30_000) throw new Error('the device was not adopted within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    // The page asks the runner whether its gate is open, through the egress proxy its
    // context names: `egress.test` now reaches B's alone. What was typed into the page is
    // what the task returns: the same page, still running, and still on the network.
    pages.openGate('adoption');
    expect(await waitForTaskEnd(b.api, running.body.id, 60_000)).toMatchObject({ status: 'succeeded', result: 'kept-state' });
    expect(await stepActionsOf(db.db, running.body.id)).toContain('driver_lost');
    const next = await b.api('POST', `/v1/devices/${device}/tasks`, { prompt: `go to ${pages.url('/plain')} then return the title` });
    expect(await waitForTaskEnd(b.api, next.body.id)).toMatchObject({ status: 'succeeded', result: 'Plain' });
    await b.api('DELETE', `/v1/devices/${device}`);
  }, 120_000);
});


