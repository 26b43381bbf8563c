import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, test } from './support/test';
import { startServiceProcess, type ServiceProcess } from '../test/support/service-process';
import { adminOn } from './admin-cli';
import { expectNoSeriousViolations } from './support/accessibility';

// The console's live view across a real restart of the service (SIGTERM, as a deployment
// stops it, then a new process on the same database and data directory): the gateway
// closes the socket with 1012, the view shows "Reconnecting…" instead of an error, opens
// the socket again with the same session token, and is live again. The spec runs a service
// of its own, since the suite's shared one is not restarted under the other specs.

let service: ServiceProcess;
let dataDir: string;

test.beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'operator-e2e-restart-'));
  service = await startServiceProcess({ OPERATOR_SERVE_CONSOLE: 'true', OPERATOR_DATA_DIR: dataDir });
});
test.afterAll(async () => {
  await service?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

test("the device page's live view reconnects by itself when the service restarts", async ({ page, request }) => {
  // A restart of the whole service (console included) and its browsers takes a while.
  test.setTimeout(120_000);
  const admin = (...args: string[]) => adminOn(service.database.url, ...args);
  const org = admin('org:create', '--name', 'Restart E2E');
  const spaceId = admin('space:create', '--org', org.org_id, '--name', 'main').space_id;
  const headers = { Authorization: `Bearer ${admin('key:create', '--org', org.org_id, '--scopes', 'operator:devices:read,operator:devices:write').key}` };
  const consoleKey = admin('operator:create', '--name', 'Margaret').console_key;
  const created = await request.post(`${service.url}/v1/devices`, { headers, data: { space_id: spaceId, name: 'restarting' } });
  expect(created.status()).toBe(201);
  const deviceId = (await created.json()).id;

  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(`${service.url}/console`);
  await page.getByLabel('Console key').fill(consoleKey);
  await page.getByLabel('Console key').press('Enter');
  await expect(page.getByTestId('signed-in-operator')).toHaveText('Signed in as Margaret');
  await page.goto(`${service.url}/console/devices/${deviceId}`);
  const state = page.getByTestId('live-state');
  await expect(page.getByTestId('live-frame')).toBeVisible({ timeout: 20_000 });
  await expect(state).toHaveText('Live');

  const restarted = service.restart();
  // A polite status, the last frame still shown, and no error about the live view.
  await expect(state).toHaveText('Reconnecting…');
  await expect(state).toHaveAttribute('aria-live', 'polite');
  await expect(page.getByTestId('live-frame')).toBeVisible();
  const liveViewAlert = page.getByRole('alert').filter({ hasText: 'Live view' });
  await expect(liveViewAlert).toHaveCount(0);
  await expectNoSeriousViolations(page);
  await restarted;

  await expect(state).toHaveText('Live', { timeout: 30_000 });
  await expect(page.getByTestId('live-frame')).toBeVisible();
  await expect(liveViewAlert).toHaveCount(0);
});
