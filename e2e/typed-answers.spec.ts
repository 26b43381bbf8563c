import type { APIRequestContext, Page } from '@playwright/test';
import { expect, test } from './support/test';
import { SECRET, startShopPages, type ShopPages } from '../test/support/shop-pages';
import { startWebhookReceiver, type WebhookReceiver } from '../test/support/webhook-receiver';
import { admin } from './admin-cli';
import { expectNoSeriousViolations } from './support/accessibility';
import { base, CONSOLE_VIEWPORT, screenshot, signInAsNewOperator } from './support/console';

// Typed escalations answered by people in a real browser: the right input for each kind,
// from the console (a choice, a confirmation answered No) and from an answer_url (a
// credentials answer typed into the device's page, and found nowhere in the console after).

test.describe.configure({ mode: 'serial' });

let shop: ShopPages;
let receiver: WebhookReceiver;
let headers: Record<string, string>;
let spaceId: string;

test.beforeAll(async () => {
  shop = await startShopPages();
  receiver = await startWebhookReceiver();
  // The CLI checks the escalation URL too; the receiver is on 127.0.0.1, as the service allows in e2e.
  process.env.OPERATOR_ALLOW_PRIVATE_DESTINATIONS = 'true';
  const org = admin('org:create', '--name', 'Typed answers', '--escalation-url', receiver.url);
  spaceId = admin('space:create', '--org', org.org_id, '--name', 'main').space_id;
  const key = admin(
    'key:create',
    '--org',
    org.org_id,
    '--scopes',
    'operator:devices:read,operator:devices:write,operator:tasks:read,operator:tasks:write,operator:escalations:read',
  ).key;
  headers = { Authorization: `Bearer ${key}` };
});
test.afterAll(async () => {
  await shop?.close();
  await receiver?.close();
});

async function get(request: APIRequestContext, path: string) {
  return (await request.get(`${base()}${path}`, { headers })).json();
}

/** A device running `prompt` until it parks; the escalation destination's delivery. */
async function parked(request: APIRequestContext, prompt: string) {
  const created = await request.post(`${base()}/v1/devices`, { headers, data: { space_id: spaceId } });
  expect(created.status()).toBe(201);
  const deviceId = (await created.json()).id;
  await expect.poll(async () => (await get(request, `/v1/devices/${deviceId}`)).status, { timeout: 30_000 }).toBe('active');
  const before = receiver.received.length;
  const submitted = await request.post(`${base()}/v1/devices/${deviceId}/tasks`, { headers, data: { prompt } });
  expect(submitted.status()).toBe(202);
  const taskId = (await submitted.json()).id as string;
  await expect.poll(async () => (await get(request, `/v1/tasks/${taskId}`)).status, { timeout: 30_000 }).toBe('needs_human');
  const [delivery] = (await receiver.waitFor(before + 1, 15_000)).slice(before);
  return { taskId, delivery: JSON.parse(delivery!.rawBody.toString('utf8')) as { answer_url: string; escalation: { id: string; expires_at: string } } };
}

async function openInConsole(page: Page, escalationId: string, operator: string) {
  await page.setViewportSize(CONSOLE_VIEWPORT);
  await signInAsNewOperator(page, operator);
  await page.goto(`${base()}/console/escalations/${escalationId}`);
  await expect(page.getByTestId('live-frame')).toBeVisible({ timeout: 20_000 });
}

test('a choice is answered from the console with radio buttons, then a takeover is finished without a text input', async ({ page, request }) => {
  const { taskId, delivery } = await parked(
    request,
    `go to ${shop.base}/shop then ask a human to choose between "Blue" and "Red" then ask a human to take over "Check the basket on the page" then return the title`,
  );
  await openInConsole(page, delivery.escalation.id, 'Chooser');
  await expect(page.getByTestId('escalation-kind')).toHaveText('Choice: pick one of the options');
  await expect(page.getByTestId('escalation-options').getByRole('listitem')).toHaveText(['Blue', 'Red']);
  // The expiry, relative and absolute, and what happens if nobody answers.
  await expect(page.getByTestId('escalation-expiry')).toContainText(/Answer by .*\d{4}.*\(in \d+ (min|hr)\.?\)\. If nobody answers by then, the task fails \(escalation_expired\)\./);
  // Nothing picked: refused on the page with checkAnswer's sentence, nothing sent.
  await page.getByRole('button', { name: 'Send answer' }).click();
  await expect(page.getByText('This choice escalation needs an answer.')).toBeVisible();
  expect((await get(request, `/v1/tasks/${taskId}`)).status).toBe('needs_human');

  await page.getByRole('radio', { name: 'Red' }).check();
  await expect(page.getByText('This choice escalation needs an answer.')).toBeHidden();
  await screenshot(page, 'answer-choice');
  await expectNoSeriousViolations(page);
  await page.getByRole('button', { name: 'Send answer' }).click();
  // The task went on with the choice (its answer, and the step the agent was given) and asked again.
  await page.getByRole('link', { name: 'open the new escalation' }).click({ timeout: 20_000 });
  expect((await get(request, `/v1/escalations/${delivery.escalation.id}`)).answer).toBe('Red');
  await expect(page.getByText('Chosen: "Red"')).toBeVisible();

  // A takeover: the instruction, no text to type, and a way to say it is done.
  await expect(page.getByTestId('escalation-question')).toHaveText('Check the basket on the page');
  await expect(page.getByTestId('escalation-kind')).toHaveText('Takeover: act on the device’s page yourself');
  await expect(page.getByTestId('takeover-instructions')).toContainText('Take over');
  await expect(page.getByTestId('answer-form').getByRole('textbox')).toHaveCount(0);
  await expectNoSeriousViolations(page);
  await page.getByRole('button', { name: 'Done: resume the task' }).click();
  await expect(page.getByTestId('task-status')).toHaveText('succeeded', { timeout: 20_000 });
  expect((await get(request, `/v1/tasks/${taskId}`)).result).toBe('Shop');
});

test('a confirmation answered Yes goes on; the next, answered "No, stop", fails the task with confirmation_declined', async ({ page, request }) => {
  const { taskId, delivery } = await parked(
    request,
    `go to ${shop.base}/shop then ask a human to confirm "Look at the price?" then ask a human to confirm "Buy the blue kettle for $1,234.50?" then click "Buy now" then return the text of "#status"`,
  );
  await openInConsole(page, delivery.escalation.id, 'Confirmer');
  await expect(page.getByTestId('escalation-kind')).toHaveText('Confirmation: yes or no');
  await page.getByRole('button', { name: 'Yes, go ahead' }).click();
  await page.getByRole('link', { name: 'open the new escalation' }).click({ timeout: 20_000 });
  expect((await get(request, `/v1/escalations/${delivery.escalation.id}`)).answer).toBe(true);

  await expect(page.getByTestId('escalation-question')).toHaveText('Buy the blue kettle for $1,234.50?');
  await expect(page.getByText('it fails with confirmation_declined')).toBeVisible();
  await expect(page.getByTestId('live-frame')).toBeVisible({ timeout: 20_000 });
  await screenshot(page, 'answer-confirm');
  await expectNoSeriousViolations(page);
  await page.getByRole('button', { name: 'No, stop' }).click();
  await expect(page.getByTestId('task-status')).toHaveText('failed', { timeout: 20_000 });
  const task = await get(request, `/v1/tasks/${taskId}`);
  expect(task.result.error).toBe('confirmation_declined');
  await expect(page.getByTestId('escalation-closed')).toBeVisible();
  await expectNoSeriousViolations(page);
});

test('credentials are given through the answer_url, typed into the device page, and shown nowhere in the console', async ({ browser, page, request }) => {
  const { taskId, delivery } = await parked(
    request,
    `go to ${shop.base}/login then ask a human for "otp" then type "{{otp}}" into "#code" then click "Send" then return the text of "#result"`,
  );
  const context = await browser.newContext({ viewport: CONSOLE_VIEWPORT });
  const link = await context.newPage();
  const requested: string[] = [];
  link.on('request', (sent) => requested.push(sent.url()));
  await link.goto(delivery.answer_url);
  await expect(link.getByTestId('escalation-kind')).toHaveText('Credentials: fill in secret fields');
  await expect(link.getByTestId('escalation-fields').getByRole('listitem')).toHaveText(['otp (secret)']);
  const field = link.getByLabel(/^otp/);
  await expect(field).toHaveAttribute('type', 'password');
  await expect(field).toHaveAttribute('autocomplete', 'off');
  await field.fill(SECRET);
  await expect(link.getByTestId('live-frame')).toBeVisible({ timeout: 20_000 });
  await screenshot(link, 'answer-credentials');
  await expectNoSeriousViolations(link);
  await link.getByRole('button', { name: 'Send answer' }).click();
  await expect(link.getByTestId('answer-sent')).toBeVisible();
  // The device's page got the code (checked in the page) and the field was masked while typed.
  await expect.poll(async () => (await get(request, `/v1/tasks/${taskId}`)).status, { timeout: 30_000 }).toBe('succeeded');
  expect((await get(request, `/v1/tasks/${taskId}`)).result).toBe('Code accepted, masked');
  expect(await link.content()).not.toContain(SECRET);
  expect(requested.filter((url) => url.includes(SECRET))).toEqual([]);
  await context.close();

  // The console's escalation and task pages know it was answered, never the value.
  await page.setViewportSize(CONSOLE_VIEWPORT);
  await signInAsNewOperator(page, 'Auditor');
  const bodies: string[] = [];
  page.on('response', (response) => void response.text().then((text) => bodies.push(text), () => undefined));
  await page.goto(`${base()}/console/escalations/${delivery.escalation.id}`);
  await expect(page.getByTestId('escalation-closed')).toContainText('Answered by answer_url');
  expect(await page.content()).not.toContain(SECRET);
  await page.goto(`${base()}/console/tasks/${taskId}`);
  await expect(page.getByText('Code accepted, masked').first()).toBeVisible();
  expect(await page.content()).not.toContain(SECRET);
  expect(bodies.length).toBeGreaterThan(0);
  expect(bodies.filter((body) => body.includes(SECRET))).toEqual([]);
  await expectNoSeriousViolations(page);
});
