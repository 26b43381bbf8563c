import { expect, test } from '@playwright/test';
import { admin } from './admin-cli';

// An operator of the preview, in a real browser: signs in to the console with the key the
// CLI printed, creates an organization with an escalation URL (its signing secret shown
// once, then rotated), another with a Space and an API key, answers the escalation a
// customer's task raised, and revokes the key.

const base = () => process.env.E2E_BASE_URL!;

async function waitForTaskStatus(request: import('@playwright/test').APIRequestContext, headers: Record<string, string>, taskId: string, status: string) {
  await expect
    .poll(async () => (await (await request.get(`${base()}/v1/tasks/${taskId}`, { headers })).json()).status, { timeout: 20_000 })
    .toBe(status);
}

test('an operator mints a key and answers an escalation in the console', async ({ page, request }) => {
  const { console_key: consoleKey } = admin('operator:create', '--name', 'Grace');

  await page.goto(`${base()}/console`);
  await page.getByLabel('Console key').fill(`${consoleKey}x`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert').filter({ hasText: 'console key' })).toHaveText('That console key is not valid.');
  await page.getByLabel('Console key').fill(consoleKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByText('Signed in as Grace')).toBeVisible();

  const newOrganization = page.getByRole('form', { name: 'New organization' });
  // An escalation URL comes with a signing secret, shown once, and rotatable.
  await newOrganization.getByLabel('Organization name').fill('Signed E2E');
  await newOrganization.getByLabel('Escalation URL').fill('https://escalations.example.test/hook');
  await newOrganization.getByRole('button', { name: 'Create organization' }).click();
  const firstSecret = (await newOrganization.getByTestId('escalation-signing-secret').textContent())!;
  expect(firstSecret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
  await newOrganization.getByRole('button', { name: 'Done' }).click();
  await expect(newOrganization.getByTestId('escalation-signing-secret')).toHaveCount(0);
  const signed = page.getByRole('article', { name: 'Organization Signed E2E' });
  await signed.getByRole('button', { name: 'Rotate escalation signing secret' }).click();
  const rotatedSecret = (await signed.getByTestId('escalation-signing-secret').textContent())!;
  expect(rotatedSecret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
  expect(rotatedSecret).not.toBe(firstSecret);

  await newOrganization.getByLabel('Organization name').fill('Console E2E');
  await newOrganization.getByRole('button', { name: 'Create organization' }).click();
  const organization = page.getByRole('article', { name: 'Organization Console E2E' });
  await organization.getByLabel('Space name').fill('main');
  await organization.getByRole('button', { name: 'Add Space' }).click();
  await expect(organization.getByText(/Spaces: main/)).toBeVisible();

  for (const scope of ['operator:devices:write', 'operator:tasks:read', 'operator:tasks:write']) {
    await organization.getByLabel(scope).check();
  }
  await organization.getByRole('button', { name: 'Create key' }).click();
  const key = (await organization.getByTestId('minted-key').textContent())!;
  expect(key).toMatch(/^svc_operator_test_/);
  const headers = { Authorization: `Bearer ${key}` };
  const spaceId = (await organization.getByText(/Spaces: main/).textContent())!.match(/[0-9a-f-]{36}/)![0];

  const device = await request.post(`${base()}/v1/devices`, { headers, data: { space_id: spaceId } });
  expect(device.status()).toBe(201);
  const deviceId = (await device.json()).id;
  const task = await request.post(`${base()}/v1/devices/${deviceId}/tasks`, { headers, data: { prompt: 'ask a human "Which plan should I pick?"' } });
  const taskId = (await task.json()).id;
  await waitForTaskStatus(request, headers, taskId, 'needs_human');

  await page.getByRole('button', { name: 'Refresh' }).click();
  const card = page.getByRole('article').filter({ hasText: 'Which plan should I pick?' });
  await expect(card).toContainText('Console E2E');
  await card.getByLabel('Answer').fill('The Pro plan');
  await card.getByRole('button', { name: 'Send answer' }).click();
  await expect(card).toHaveCount(0);
  await waitForTaskStatus(request, headers, taskId, 'succeeded');

  const keyId = key.split('_')[3]!;
  await organization.getByRole('button', { name: `Revoke ${keyId}` }).click();
  await expect(organization.getByText(/revoked/)).toBeVisible();
  await expect.poll(async () => (await request.get(`${base()}/v1/whoami`, { headers })).status(), { timeout: 5_000 }).toBe(401);

  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByLabel('Console key')).toBeVisible();
});
