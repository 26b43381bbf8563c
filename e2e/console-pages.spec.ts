import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from './support/test';
import postgres from 'postgres';
import { expectNoSeriousViolations } from './support/accessibility';
import { base, CONSOLE_VIEWPORT, screenshot, signInAsNewOperator } from './support/console';
import { admin } from './admin-cli';

// The console's pages in a real browser against the real service, each checked with axe
// and photographed for the README: the organizations list with 1,000 organizations
// (paged, searched), an organization's page (usage, settings, Spaces, devices, tasks, API
// keys, audit log) where the operator edits the escalation URL and sleeps and wakes a
// device, and a task's page with its step timeline, step screenshots and recording.

test.use({ viewport: CONSOLE_VIEWPORT });

const PAGE = `<!doctype html><html lang="en"><title>Checkout</title><h1>Checkout</h1><label for="plan">Plan</label><input id="plan"></html>`;
let site: Server;
let siteUrl: string;

test.beforeAll(async () => {
  site = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(PAGE);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/checkout`;
});
test.afterAll(async () => {
  await new Promise((resolve) => site.close(resolve));
});

test('with 1,000 organizations the list pages and searches', async ({ page }) => {
  const sql = postgres(process.env.E2E_DATABASE_URL!, { max: 1, onnotice: () => {} });
  const names = Array.from({ length: 1000 }, (_, i) => `Fleet ${String(i).padStart(4, '0')}`);
  await sql`insert into organizations (name, created_at) select name, now() - (ord * interval '1 second') from unnest(${names}::text[]) with ordinality as t(name, ord)`;
  await sql.end();

  await signInAsNewOperator(page, 'Lin');
  // From the keyboard: the navigation's links, the pager's buttons, the search form.
  await page.getByRole('link', { name: 'Organizations' }).focus();
  await page.keyboard.press('Enter');
  await expect(page.getByRole('heading', { name: 'Organizations', level: 1 })).toBeVisible();
  const count = page.getByTestId('organization-count');
  await expect(count).toHaveText(/^1,0\d\d organizations$/);
  const rows = page.getByRole('table', { name: 'Organizations' }).getByRole('row');
  await expect(rows).toHaveCount(21);
  await expectNoSeriousViolations(page);
  await screenshot(page, 'organizations');

  // Paging: the next page shows other organizations.
  const firstOnPage1 = await rows.nth(1).getByRole('link').textContent();
  await page.getByRole('button', { name: 'Page 2' }).focus();
  await page.keyboard.press('Enter');
  await expect(page.getByText(/^Page 2 of \d+$/)).toBeVisible();
  await expect(rows.nth(1).getByRole('link')).not.toHaveText(firstOnPage1!);

  // Search, case-insensitive, from the keyboard.
  await page.getByLabel('Search organizations').fill('fleet 042');
  await page.keyboard.press('Tab');
  await expect(page.getByRole('button', { name: 'Search' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(count).toHaveText('10 organizations');
  await expect(rows).toHaveCount(11);
  await expect(rows.nth(1).getByRole('link')).toHaveText('Fleet 0420');
  await page.getByLabel('Search organizations').fill('no such fleet');
  await expect(page.getByText('No organization matches')).toBeVisible();
});

test('an organization’s page: escalation URL edited, device slept and woken, key minted, tasks, usage and audit; the task page shows its timeline', async ({ page, request }) => {
  // A real task and a real device's sleep and wake, on a machine shared with other runs.
  test.setTimeout(180_000);
  const { org_id: orgId } = admin('org:create', '--name', 'Pages E2E', '--max-devices', '5');
  const { space_id: spaceId } = admin('space:create', '--org', orgId, '--name', 'main');
  const { key } = admin('key:create', '--org', orgId, '--scopes', 'operator:devices:read,operator:devices:write,operator:tasks:read,operator:tasks:write');
  const headers = { Authorization: `Bearer ${key}` };
  const device = await (await request.post(`${base()}/v1/devices`, { headers, data: { space_id: spaceId, name: 'checkout-bot' } })).json();
  const task = await (await request.post(`${base()}/v1/devices/${device.id}/tasks`, { headers, data: { prompt: `go to ${siteUrl} then type "Pro" into "Plan" then return the title` } })).json();
  await expect.poll(async () => (await (await request.get(`${base()}/v1/tasks/${task.id}`, { headers })).json()).status, { timeout: 30_000 }).toBe('succeeded');

  await signInAsNewOperator(page, 'Noor');
  await page.goto(`${base()}/console/organizations/${orgId}`);
  await expect(page.getByRole('heading', { name: 'Pages E2E' })).toBeVisible();
  await expect(page.getByTestId('usage-totals')).toContainText('Tasks1');

  // The escalation URL, edited in place and saved with Enter; its first signing secret shown once.
  const settings = page.getByRole('form', { name: 'Organization settings' });
  await expect(settings.getByLabel('Max devices')).toHaveValue('5');
  await settings.getByLabel('Escalation URL').fill('https://escalations.example.test/pages');
  await settings.getByLabel('Escalation URL').press('Enter');
  await expect(settings.getByTestId('escalation-signing-secret')).toHaveText(/^whsec_/);
  await expect(settings.getByRole('status').filter({ hasText: 'Saved' })).toBeVisible();
  await settings.getByRole('button', { name: 'Done' }).click();
  await page.reload();
  await expect(page.getByRole('form', { name: 'Organization settings' }).getByLabel('Escalation URL')).toHaveValue('https://escalations.example.test/pages');
  await expectNoSeriousViolations(page);
  await screenshot(page, 'organization');

  // Devices: sleep and wake, as /v1 does them.
  await page.getByRole('tab', { name: 'Devices' }).click();
  const row = page.getByTestId('device-checkout-bot');
  await expect(row).toContainText('active');
  await expect(row.getByRole('link', { name: 'checkout-bot' })).toHaveAttribute('href', `/console/devices/${device.id}`);
  await expectNoSeriousViolations(page);
  await screenshot(page, 'organization-devices');
  await row.getByRole('button', { name: 'Sleep checkout-bot' }).click();
  await expect(row).toContainText('sleeping');
  expect((await (await request.get(`${base()}/v1/devices/${device.id}`, { headers })).json()).status).toBe('sleeping');
  await row.getByRole('button', { name: 'Wake checkout-bot' }).click();
  await expect(row).toContainText('active', { timeout: 30_000 });

  // API keys: the scope picker; the key shown once.
  await page.getByRole('tab', { name: 'API keys' }).click();
  await expect(page.getByRole('table', { name: 'API keys' }).getByRole('row')).toHaveCount(2);
  const newKey = page.getByRole('form', { name: 'New API key' });
  await newKey.getByLabel('operator:usage:read').check();
  await newKey.getByLabel('main').check();
  await newKey.getByRole('button', { name: 'Create key' }).click();
  await expect(page.getByTestId('minted-key')).toHaveText(/^svc_operator_test_[a-z2-7]{12}_/);
  await expectNoSeriousViolations(page);
  await screenshot(page, 'organization-keys');
  await page.getByRole('button', { name: 'Done' }).click();
  await expect(page.getByRole('table', { name: 'API keys' }).getByRole('row')).toHaveCount(3);

  // The audit log names the operator behind each console change.
  await page.getByRole('tab', { name: 'Audit log' }).click();
  const audit = page.getByRole('table', { name: 'Audit log' });
  await expect(audit.getByRole('row').filter({ hasText: 'operator.device.slept' })).toContainText('Noor (console)');
  await expect(audit.getByRole('row').filter({ hasText: 'operator.organization.updated' })).toContainText('Noor (console)');
  await expect(audit.getByRole('row').filter({ hasText: 'operator.api_key.created' }).first()).toContainText('Noor (console)');
  await expectNoSeriousViolations(page);
  await screenshot(page, 'organization-audit');

  // Recent tasks lead to the task's page: prompt, result and the step timeline.
  await page.getByRole('tab', { name: 'Tasks' }).click();
  await expectNoSeriousViolations(page);
  await page.getByRole('link', { name: /type "Pro" into "Plan"/ }).click();
  await expect(page).toHaveURL(new RegExp(`/console/tasks/${task.id}$`));
  await expect(page.getByTestId('task-prompt')).toContainText('type "Pro" into "Plan"');
  await expect(page.getByTestId('task-result')).toHaveText('Checkout');
  const steps = page.getByRole('region', { name: 'Steps' });
  await expect(steps.getByText(siteUrl).first()).toBeVisible();
  await expect(steps.getByText('action', { exact: true }).first()).toBeVisible();
  // Each step's screenshot, loaded by the <img> with the sign-in cookie alone (the console's
  // byte route), and a link that opens it full size.
  const thumbnail = steps.getByTestId('step-screenshot').first();
  await thumbnail.scrollIntoViewIfNeeded();
  await expect.poll(() => thumbnail.evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth), { timeout: 10_000 }).toBeGreaterThan(0);
  const full = steps.getByRole('link', { name: /Screenshot of the page after step \d+, full size/ }).first();
  await expect(full).toHaveAttribute('href', new RegExp(`^/console/artifacts/tasks/${task.id}/steps/\\d+/screenshot$`));
  // The finished task's recording: the <video> reads its metadata through the same door.
  const recording = page.getByRole('region', { name: 'Recording' }).getByTestId('task-recording');
  await expect.poll(() => recording.evaluate((video: HTMLVideoElement) => video.readyState), { timeout: 15_000 }).toBeGreaterThanOrEqual(1);
  expect(await recording.evaluate((video: HTMLVideoElement) => video.videoWidth)).toBeGreaterThan(0);
  await page.evaluate(() => window.scrollTo(0, 0));
  await expectNoSeriousViolations(page);
  await screenshot(page, 'task');

  await request.delete(`${base()}/v1/devices/${device.id}`, { headers });
});

test('the escalations inbox lists what waits, filtered by organization', async ({ page, request }) => {
  const { org_id: orgId } = admin('org:create', '--name', 'Inbox E2E');
  const { space_id: spaceId } = admin('space:create', '--org', orgId, '--name', 'main');
  const { key } = admin('key:create', '--org', orgId, '--scopes', 'operator:devices:write,operator:tasks:read,operator:tasks:write');
  const headers = { Authorization: `Bearer ${key}` };
  const device = await (await request.post(`${base()}/v1/devices`, { headers, data: { space_id: spaceId, name: 'help-desk' } })).json();
  const task = await (await request.post(`${base()}/v1/devices/${device.id}/tasks`, { headers, data: { prompt: `go to ${siteUrl} then ask a human "Which plan should the customer get?"` } })).json();
  await expect.poll(async () => (await (await request.get(`${base()}/v1/tasks/${task.id}`, { headers })).json()).status, { timeout: 30_000 }).toBe('needs_human');

  await signInAsNewOperator(page, 'Mira');
  const row = page.getByRole('row').filter({ hasText: 'Which plan should the customer get?' });
  await expect(row).toContainText('Inbox E2E');
  await expect(row).toContainText(/ago|now/);
  await expect(row).toContainText(/in \d+ min/);
  await expectNoSeriousViolations(page);
  await screenshot(page, 'escalations');
  await page.getByRole('combobox', { name: 'Organization' }).click();
  await page.getByRole('option', { name: 'Inbox E2E (1)' }).click();
  await expect(page).toHaveURL(new RegExp(`/console\\?org=${orgId}$`));
  await expect(page.getByRole('table', { name: 'Waiting escalations' }).getByRole('row')).toHaveCount(2);
  await request.delete(`${base()}/v1/devices/${device.id}`, { headers });
});
