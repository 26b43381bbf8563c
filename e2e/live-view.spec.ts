import type { APIRequestContext, Page } from '@playwright/test';
import { expect, test } from './support/test';
import { startTaskPages, type TaskPages } from '../test/support/task-pages';
import { startWebhookReceiver, type WebhookReceiver } from '../test/support/webhook-receiver';
import { admin } from './admin-cli';
import { expectNoSeriousViolations } from './support/accessibility';

// The human-in-the-loop moment in a real browser against the real server: an operator
// watches a parked task's device live from the console, takes it over, types into the
// device's page, releases, answers, and the task succeeds with what was typed; the same
// through an escalation's answer_url without a console key; a used link is refused.

test.describe.configure({ mode: 'serial' });

const base = () => process.env.E2E_BASE_URL!;
const VIEWPORT = { width: 1280, height: 800 };
let pages: TaskPages;
let receiver: WebhookReceiver;
let headers: Record<string, string>;
let spaceId: string;
let consoleKey: string;

test.beforeAll(async () => {
  pages = await startTaskPages();
  receiver = await startWebhookReceiver();
  process.env.OPERATOR_ALLOW_PRIVATE_DESTINATIONS = 'true';
  const org = admin('org:create', '--name', 'Live E2E', '--escalation-url', receiver.url);
  spaceId = admin('space:create', '--org', org.org_id, '--name', 'main').space_id;
  const key = admin('key:create', '--org', org.org_id, '--scopes', 'operator:devices:read,operator:devices:write,operator:tasks:read,operator:tasks:write').key;
  headers = { Authorization: `Bearer ${key}` };
  consoleKey = admin('operator:create', '--name', 'Grace').console_key;
});
test.afterAll(async () => {
  await pages?.close();
  await receiver?.close();
});

async function task(request: APIRequestContext, taskId: string) {
  return (await request.get(`${base()}/v1/tasks/${taskId}`, { headers })).json();
}

/** An active device running a task that opened the echo page and asked a human; its delivery's body. */
async function parkedTask(request: APIRequestContext, prompt: (echo: string) => string) {
  const created = await request.post(`${base()}/v1/devices`, { headers, data: { space_id: spaceId } });
  expect(created.status()).toBe(201);
  const deviceId = (await created.json()).id;
  await expect.poll(async () => (await (await request.get(`${base()}/v1/devices/${deviceId}`, { headers })).json()).status, { timeout: 30_000 }).toBe('active');
  const before = receiver.received.length;
  const submitted = await request.post(`${base()}/v1/devices/${deviceId}/tasks`, { headers, data: { prompt: prompt(pages.url('/echo')) } });
  const taskId = (await submitted.json()).id;
  await expect.poll(async () => (await task(request, taskId)).status, { timeout: 30_000 }).toBe('needs_human');
  const [delivery] = (await receiver.waitFor(before + 1, 15_000)).slice(before);
  return { deviceId, taskId, delivery: JSON.parse(delivery!.rawBody.toString('utf8')) as { answer_url: string; escalation: { id: string } } };
}

/** Waits for frames, takes over, clicks the echo page's field through the live view and types. */
async function takeOverAndType(page: Page, text: string, screenshot: string) {
  const frame = page.getByTestId('live-frame');
  await expect(frame).toBeVisible({ timeout: 20_000 });
  await expect(page.getByTestId('live-state')).toHaveText('Live');
  await page.getByRole('button', { name: 'Take over' }).click();
  await expect(page.getByTestId('live-state')).toHaveText(/Taken over/);
  const box = (await frame.boundingBox())!;
  const width = Number(await frame.getAttribute('data-frame-width'));
  const height = Number(await frame.getAttribute('data-frame-height'));
  // The field is at (20..420, 20..80) in the device's viewport: click its middle as displayed.
  await page.mouse.click(box.x + (220 / width) * box.width, box.y + (50 / height) * box.height);
  await expect(page.getByTestId('live-view')).toBeFocused();
  await page.keyboard.type(text, { delay: 30 });
  // Inputs go through the gateway in order; give the page a moment to take the last ones.
  await page.waitForTimeout(1_000);
  await page.screenshot({ path: `docs/screenshots/${screenshot}.png` });
}

test('an operator watches, takes over, types, releases and answers from the console', async ({ page, request }) => {
  const { taskId, delivery } = await parkedTask(
    request,
    (echo) => `go to ${echo} then ask a human "Type the customer's name into the field" then ask a human "Is the name right?" then return the text of "#echo"`,
  );
  await page.setViewportSize(VIEWPORT);
  await page.goto(`${base()}/console`);
  await page.getByLabel('Console key').fill(consoleKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: "Type the customer's name into the field" }).click();
  await expect(page).toHaveURL(new RegExp(`/console/escalations/${delivery.escalation.id}$`));
  await expect(page.getByTestId('escalation-question')).toHaveText("Type the customer's name into the field");
  await expect(page.getByTestId('live-frame')).toBeVisible({ timeout: 20_000 });
  await expect(page.getByTestId('task-status')).toHaveText('needs human');
  await page.screenshot({ path: 'docs/screenshots/escalation-live-view.png' });
  await expectNoSeriousViolations(page);

  await takeOverAndType(page, 'Ada Lovelace', 'escalation-taken-over');
  await expectNoSeriousViolations(page);
  await page.getByRole('button', { name: 'Release' }).click();
  // Released: the task runs again and asks its next question, which the page links to.
  await expect(page.getByTestId('escalation-closed')).toBeVisible();
  await page.getByRole('link', { name: 'open the new escalation' }).click({ timeout: 20_000 });
  await expect(page.getByTestId('escalation-question')).toHaveText('Is the name right?');
  await page.getByLabel('Your answer').fill('Yes');
  await page.getByRole('button', { name: 'Send answer' }).click();
  await expect(page.getByTestId('task-status')).toHaveText('succeeded', { timeout: 20_000 });
  await expect(page.getByTestId('task-result')).toContainText('Ada Lovelace');
  expect((await task(request, taskId)).result).toBe('Ada Lovelace');

  // The device's page: status, no task any more, its live view.
  await page.getByRole('link', { name: /^device-/ }).click();
  await expect(page.getByTestId('device-status')).toHaveText('active');
  await expect(page.getByText('No task is running on this device.')).toBeVisible();
  await expect(page.getByTestId('live-frame')).toBeVisible({ timeout: 20_000 });
  await page.screenshot({ path: 'docs/screenshots/device-page.png' });
  await expectNoSeriousViolations(page);
});

test('a person with only the answer_url watches, takes over, types and answers; the link then says so', async ({ browser, request }) => {
  const { taskId, delivery } = await parkedTask(request, (echo) => `go to ${echo} then ask a human "Please type your name" then return the text of "#echo"`);
  const secret = new URL(delivery.answer_url).hash.slice(1);
  const context = await browser.newContext({ viewport: VIEWPORT });
  const page = await context.newPage();
  const requested: string[] = [];
  page.on('request', (sent) => requested.push(sent.url(), JSON.stringify(sent.headers())));
  await page.goto(delivery.answer_url);
  await expect(page.getByTestId('escalation-question')).toHaveText('Please type your name');
  // The secret left the address bar as soon as it was read.
  expect(page.url()).toBe(delivery.answer_url.split('#')[0]);
  expect(page.url()).toMatch(new RegExp(`/answer/${delivery.escalation.id}$`));
  await expect(page.getByTestId('live-frame')).toBeVisible({ timeout: 20_000 });
  await page.screenshot({ path: 'docs/screenshots/answer-page.png' });
  await expectNoSeriousViolations(page);

  await takeOverAndType(page, 'Grace Hopper', 'answer-page-taken-over');
  await page.getByLabel('Your answer').fill('Typed it in the field');
  await page.getByRole('button', { name: 'Send answer' }).click();
  await expect(page.getByTestId('answer-sent')).toBeVisible();
  await expect.poll(async () => (await task(request, taskId)).status, { timeout: 20_000 }).toBe('succeeded');
  expect((await task(request, taskId)).result).toBe('Grace Hopper');
  // The secret never travelled in a URL or a header: only in the open call's body.
  expect(requested.filter((line) => line.includes(secret))).toEqual([]);

  // Reopening the answered link: refused, saying why.
  const again = await context.newPage();
  await again.goto(delivery.answer_url);
  await expect(again.getByTestId('answer-refused')).toContainText('This escalation was already answered.');
  await context.close();
});

test('a second visit to a used answer_url is refused', async ({ browser, request }) => {
  const { delivery } = await parkedTask(request, (echo) => `go to ${echo} then ask a human "Who opens this?" then return the title`);
  const first = await browser.newContext({ viewport: VIEWPORT });
  const firstPage = await first.newPage();
  await firstPage.goto(delivery.answer_url);
  await expect(firstPage.getByTestId('escalation-question')).toHaveText('Who opens this?');
  // The tab that opened it keeps working on reload.
  await firstPage.reload();
  await expect(firstPage.getByTestId('escalation-question')).toHaveText('Who opens this?');

  const second = await browser.newContext({ viewport: VIEWPORT });
  const secondPage = await second.newPage();
  await secondPage.goto(delivery.answer_url);
  await expect(secondPage.getByTestId('answer-refused')).toContainText('This link was already used');
  await secondPage.screenshot({ path: 'docs/screenshots/answer-link-used.png' });
  await expectNoSeriousViolations(secondPage);
  await first.close();
  await second.close();
});
