import { expect, test } from './support/test';
import { expectNoSeriousViolations } from './support/accessibility';
import { base, CONSOLE_VIEWPORT, screenshot } from './support/console';
import { admin } from './admin-cli';

// An operator of the preview, in a real browser: signs in to the console with the key the
// CLI printed (a wrong key refused in place), creates an organization with an escalation
// URL (its signing secret shown once, then rotated), adds a Space, mints an API key
// (shown once) that works on the API, finds the escalation a customer's task raised in
// the inbox, filtered by organization, revokes the key and signs out.

test.use({ viewport: CONSOLE_VIEWPORT });

async function waitForTaskStatus(request: import('@playwright/test').APIRequestContext, headers: Record<string, string>, taskId: string, status: string) {
  await expect
    .poll(async () => (await (await request.get(`${base()}/v1/tasks/${taskId}`, { headers })).json()).status, { timeout: 20_000 })
    .toBe(status);
}

test('an operator creates an organization, mints a key, finds its escalation in the inbox and revokes the key', async ({ page, request }) => {
  const { console_key: consoleKey } = admin('operator:create', '--name', 'Grace');

  await page.goto(`${base()}/console`);
  await expect(page.getByRole('heading', { name: 'Operator console' })).toBeVisible();
  await expectNoSeriousViolations(page);
  await screenshot(page, 'sign-in');
  await page.getByLabel('Console key').fill(`${consoleKey}x`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert', { name: 'Sign-in failed' })).toContainText('That console key is not valid.');
  await page.getByLabel('Console key').fill(consoleKey);
  await page.getByLabel('Console key').press('Enter');
  await expect(page.getByTestId('signed-in-operator')).toHaveText('Signed in as Grace');

  // An escalation URL comes with a signing secret, shown once, and rotatable.
  await page.getByRole('link', { name: /Organizations/ }).click();
  await page.getByRole('button', { name: 'New organization' }).click();
  const dialog = page.getByRole('dialog', { name: 'New organization' });
  await dialog.getByLabel('Organization name').fill('Console E2E');
  await dialog.getByLabel('Escalation URL').fill('https://escalations.example.test/hook');
  await dialog.getByRole('button', { name: 'Create organization' }).click();
  const firstSecret = (await dialog.getByTestId('escalation-signing-secret').textContent())!;
  expect(firstSecret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
  await dialog.getByRole('button', { name: 'Done' }).click();
  await expect(page.getByRole('heading', { name: 'Console E2E' })).toBeVisible();
  await expect(page.getByTestId('escalation-signing-secret')).toHaveCount(0);
  await page.getByRole('button', { name: 'Rotate escalation signing secret' }).click();
  const rotatedSecret = (await page.getByTestId('escalation-signing-secret').textContent())!;
  expect(rotatedSecret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
  expect(rotatedSecret).not.toBe(firstSecret);
  await page.getByRole('button', { name: 'Done' }).click();

  const spaces = page.getByRole('region', { name: 'Spaces' });
  await spaces.getByLabel('Space name').fill('main');
  await spaces.getByLabel('Space name').press('Enter');
  const spaceId = (await spaces.getByRole('row', { name: /main/ }).getByRole('code').textContent())!;
  expect(spaceId).toMatch(/^[0-9a-f-]{36}$/);

  await page.getByRole('tab', { name: 'API keys' }).click();
  const newKey = page.getByRole('form', { name: 'New API key' });
  for (const scope of ['operator:devices:write', 'operator:tasks:read', 'operator:tasks:write']) await newKey.getByLabel(scope).check();
  await newKey.getByRole('button', { name: 'Create key' }).click();
  const key = (await page.getByTestId('minted-key').textContent())!;
  expect(key).toMatch(/^svc_operator_test_/);
  await page.getByRole('button', { name: 'Done' }).click();
  await expect(page.getByTestId('minted-key')).toHaveCount(0);
  const headers = { Authorization: `Bearer ${key}` };

  const device = await request.post(`${base()}/v1/devices`, { headers, data: { space_id: spaceId } });
  expect(device.status()).toBe(201);
  const deviceId = (await device.json()).id;
  const task = await request.post(`${base()}/v1/devices/${deviceId}/tasks`, { headers, data: { prompt: 'ask a human "Which plan should I pick?"' } });
  const taskId = (await task.json()).id;
  await waitForTaskStatus(request, headers, taskId, 'needs_human');

  // The inbox, filtered by the organization: the escalation links to its page.
  await page.getByRole('link', { name: 'Waiting escalations' }).click();
  await expect(page).toHaveURL(/\/console\?org=/);
  const row = page.getByRole('row').filter({ hasText: 'Which plan should I pick?' });
  await expect(row).toContainText('Console E2E');
  await expect(row.getByRole('link', { name: 'Which plan should I pick?' })).toHaveAttribute('href', /^\/console\/escalations\/esc_/);
  await page.getByRole('combobox', { name: 'Organization' }).click();
  await page.getByRole('option', { name: 'All organizations' }).click();
  await expect(row).toBeVisible();

  // Deleting the device ends the task (device_lost) and with it the escalation.
  expect((await request.delete(`${base()}/v1/devices/${deviceId}`, { headers })).status()).toBe(202);

  const keyId = key.split('_')[3]!;
  await page.goto(`${base()}/console/organizations`);
  await page.getByRole('link', { name: 'Console E2E' }).click();
  await page.getByRole('tab', { name: 'API keys' }).click();
  await page.getByRole('button', { name: `Revoke ${keyId}` }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
  await expect(page.getByRole('row', { name: new RegExp(keyId) })).toContainText('revoked');
  await expect.poll(async () => (await request.get(`${base()}/v1/whoami`, { headers })).status(), { timeout: 5_000 }).toBe(401);

  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByLabel('Console key')).toBeVisible();
});
