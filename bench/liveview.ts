import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { connectDatabase } from '../db/client';
import { createApiKey, createOrganization, createSpace } from '../server/domain/orgs/operator-admin';
import { scopes } from '../server/domain/keys/scopes';
import { machineDescription, percentile, startServiceProcess } from '../test/support/service-process';
import { cpuBusyFraction } from './machine-load';

// `npm run bench:liveview`: the live view's input → page → frame path through the real
// service in its own process. For 1 and for 10 devices, each held by a task (taken over
// by a control session) and watched over the session WebSocket: the time from sending a
// click to the first frame that shows its effect (the page flips its colour on mousedown
// and nothing else on it moves, so that is the first frame unlike the one before the click), frames per second while the page animates, the CPU the
// service and the devices' Chromium use per watched device meanwhile, and the frames a
// still page sends (goal: none).
const COUNTS = [1, 10];
const CLICKS_PER_DEVICE = Number(process.env.BENCH_CLICKS ?? 20);
/** Between two clicks on one device: the page is still again long before. */
const CLICK_GAP_MS = 400;
const STILL_MS = 2_000;
const ANIMATION_MS = 3_000;
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** The page's two colours, swapped on each click; the animation runs on key "a". */
const COLOURS = [
  [0, 0, 160],
  [240, 200, 0],
] as const;

function pageServer(): Promise<{ server: Server; url: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<!doctype html><title>Live</title>
      <style>html, body { margin: 0; height: 100%; background: rgb(${COLOURS[0].join(',')}) } #box { position: absolute; width: 200px; height: 200px; background: #fff; top: 100px; left: 0 }</style>
      <div id="box"></div>
      <script>
        let clicks = 0;
        let animating = false;
        document.addEventListener('mousedown', () => {
          clicks += 1;
          document.body.style.background = clicks % 2 ? 'rgb(${COLOURS[1].join(',')})' : 'rgb(${COLOURS[0].join(',')})';
        });
        document.addEventListener('keydown', (event) => {
          if (event.key !== 'a') return;
          animating = !animating;
          if (animating) requestAnimationFrame(function step(time) {
            document.getElementById('box').style.left = (time / 2 % 1000) + 'px';
            if (animating) requestAnimationFrame(step);
          });
        });
      </script>`);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` })));
}

interface Frame {
  at: number;
  data: string;
}

interface Watched {
  deviceId: string;
  socket: WebSocket;
  frames: Frame[];
  click(): void;
  key(key: string): void;
}

/** utime + stime of every live process in the groups led by `leaders`, plus `pids` themselves. */
async function cpuTicks(leaders: number[], pids: number[]): Promise<number> {
  const groups = new Set(leaders);
  const single = new Set(pids);
  let ticks = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (!groups.has(Number(fields[2])) && !single.has(Number(entry))) continue;
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // exited meanwhile
    }
  }
  return ticks;
}

async function main(): Promise<void> {
  const pages = await pageServer();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'bench-liveview-'));
  const service = await startServiceProcess(
    {
      OPERATOR_DATA_DIR: dataDir,
      CHROMIUM_PATH,
      OPERATOR_MAX_BROWSERS: '12',
      OPERATOR_ALLOW_PRIVATE_DESTINATIONS: 'true',
      OPERATOR_RATE_LIMIT_PER_SEC: '1000',
      OPERATOR_RATE_LIMIT_BURST: '1000',
    },
    { log: 'discard' },
  );
  const results = [];
  try {
    const database = connectDatabase(service.database.url, 2);
    const { org_id: orgId } = await createOrganization(database.db, { name: 'bench', entitled: true, maxDevices: null, maxDeviceSeconds: null, escalationUrl: null });
    const { space_id: spaceId } = await createSpace(database.db, orgId, 'bench');
    const { key } = await createApiKey(database.db, { orgId, scopes: [...scopes], spaceIds: [], env: 'test' });
    await database.close();
    const call = async (method: string, route: string, body?: unknown): Promise<any> => {
      const response = await fetch(`${service.url}${route}`, {
        method,
        headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const parsed = await response.json();
      if (response.status >= 300) throw new Error(`${method} ${route} answered ${response.status}: ${JSON.stringify(parsed)}`);
      return parsed;
    };

    /** A device whose task waits at the page, taken over and watched by a control session. */
    const watchDevice = async (): Promise<Watched> => {
      const device = await call('POST', '/v1/devices', { space_id: spaceId });
      const task = await call('POST', `/v1/devices/${device.id}/tasks`, { prompt: `go to ${pages.url} then wait for "Never shown" then return the title` });
      for (let tries = 0; (await call('GET', `/v1/tasks/${task.id}`)).usage.steps < 1; tries += 1) {
        if (tries > 200) throw new Error('the task never reached the page');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const session = await call('POST', `/v1/devices/${device.id}/sessions`, { mode: 'control' });
      await call('POST', `/v1/sessions/${session.id}/takeover`, { reason: 'bench' });
      const socket = new WebSocket(`${service.url.replace('http', 'ws')}${new URL(session.ws_url).pathname}`, ['svc.operator.v1', `svc.token.${session.session_token}`]);
      const frames: Frame[] = [];
      socket.on('message', (data) => {
        const at = performance.now();
        const text = data.toString();
        if (text.startsWith('{"type":"frame"')) frames.push({ at, data: (JSON.parse(text) as { data: string }).data });
      });
      await new Promise((resolve, reject) => {
        socket.once('open', resolve);
        socket.once('error', reject);
      });
      const send = (input: unknown) => socket.send(JSON.stringify({ type: 'input', input }));
      return { deviceId: device.id, socket, frames, click: () => send({ kind: 'click', x: 900, y: 600 }), key: (name) => send({ kind: 'key', key: name }) };
    };

    const chromiumPids = async (deviceIds: string[]) =>
      Promise.all(deviceIds.map(async (id) => Number((await readFile(path.join(dataDir, 'profiles', id.slice('dev_'.length), 'chromium.pid'), 'utf8')).trim())));

    for (const count of COUNTS) {
      const watched: Watched[] = [];
      for (let i = 0; i < count; i += 1) watched.push(await watchDevice());
      await new Promise((resolve) => setTimeout(resolve, 1_500));

      // Clicks: every device at once, CLICKS_PER_DEVICE each, CLICK_GAP_MS apart; a click's
      // latency is until the first frame showing its colour.
      const latencies: number[] = [];
      let missed = 0;
      await Promise.all(
        watched.map(async (view, index) => {
          await new Promise((resolve) => setTimeout(resolve, (index * CLICK_GAP_MS) / count)); // staggered
          const clicks: Array<{ at: number; before: string | undefined }> = [];
          for (let i = 1; i <= CLICKS_PER_DEVICE; i += 1) {
            clicks.push({ at: performance.now(), before: view.frames.at(-1)?.data });
            view.click();
            await new Promise((resolve) => setTimeout(resolve, CLICK_GAP_MS));
          }
          for (const click of clicks) {
            const effect = view.frames.find((frame) => frame.at > click.at && frame.data !== click.before);
            if (effect === undefined) missed += 1;
            else latencies.push(effect.at - click.at);
          }
        }),
      );

      // A still page sends nothing.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const stillBefore = watched.map((view) => view.frames.length);
      await new Promise((resolve) => setTimeout(resolve, STILL_MS));
      const stillFrames = watched.reduce((sum, view, index) => sum + view.frames.length - stillBefore[index]!, 0);

      // Animation: frames per second per device, CPU per device.
      const pids = await chromiumPids(watched.map((view) => view.deviceId));
      for (const view of watched) view.key('a');
      await new Promise((resolve) => setTimeout(resolve, 500));
      const framesBefore = watched.map((view) => view.frames.length);
      const serviceBefore = await cpuTicks([], [service.pid]);
      const chromiumBefore = await cpuTicks(pids, []);
      const started = performance.now();
      await new Promise((resolve) => setTimeout(resolve, ANIMATION_MS));
      const seconds = (performance.now() - started) / 1000;
      const serviceTicks = (await cpuTicks([], [service.pid])) - serviceBefore;
      const chromiumTicks = (await cpuTicks(pids, [])) - chromiumBefore;
      const fps = watched.map((view, index) => (view.frames.length - framesBefore[index]!) / seconds);
      for (const view of watched) view.key('a');

      const sorted = [...latencies].sort((a, b) => a - b);
      const percentOfCore = (ticks: number) => Math.round((ticks / TICKS_PER_SECOND / seconds / count) * 1000) / 10;
      results.push({
        devices: count,
        clicks: latencies.length + missed,
        clicksWithoutEffectFrame: missed,
        clickToFrameP50Ms: Math.round(percentile(sorted, 50)),
        clickToFrameP95Ms: Math.round(percentile(sorted, 95)),
        framesFromStillPages: stillFrames,
        animationFpsPerDeviceP50: Math.round(percentile([...fps].sort((a, b) => a - b), 50) * 10) / 10,
        cpuPerWatchedDevicePercentOfCore: { service: percentOfCore(serviceTicks), chromium: percentOfCore(chromiumTicks) },
      });
      for (const view of watched) {
        view.socket.close();
        await call('DELETE', `/v1/devices/${view.deviceId}`);
      }
    }
  } finally {
    await service.stop();
    await new Promise((resolve) => pages.server.close(resolve));
    await rm(dataDir, { recursive: true, force: true });
  }
  const tenDevices = results.find((row) => row.devices === 10);
  console.log(
    JSON.stringify(
      {
        machine: machineDescription(),
        machineBusyAfter: Math.round((await cpuBusyFraction()) * 100) / 100,
        results,
        goalsMet: tenDevices && {
          p50AtMost100Ms: tenDevices.clickToFrameP50Ms <= 100,
          p95AtMost250Ms: tenDevices.clickToFrameP95Ms <= 250,
          noFramesFromStillPages: results.every((row) => row.framesFromStillPages === 0),
        },
      },
      null,
      2,
    ),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
