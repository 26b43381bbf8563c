import { expect, test } from './support/test';
import { expectNoSeriousViolations } from './support/accessibility';
import { base, CONSOLE_VIEWPORT, screenshot, signInAsNewOperator } from './support/console';
import { admin } from './admin-cli';

// An organization's credential vault in the console: names, domains and what each
// credential holds, never a value; an operator rotates a password and deletes a credential
// (/v1's own operations, audited with the operator). Checked with axe and photographed.

test.use({ viewport: CONSOLE_VIEWPORT });

const PASSWORD = 'console-Secret-8812';
const ROTATED = 'console-Rotated-4471';
const TOTP_SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DP';

test('the Credentials tab lists the vault, rotates a password and deletes a credential without showing a value', async ({ page, request }) => {
  const { org_id: orgId } = admin('org:create', '--name', 'Vault E2E');
  const { space_id: spaceId } = admin('space:create', '--org', orgId, '--name', 'main');
  const { key } = admin('key:create', '--org', orgId, '--scopes', 'operator:credentials:read,operator:credentials:write');
  const headers = { Authorization: `Bearer ${key}` };
  const bank = await (await request.post(`${base()}/v1/credentials`, { headers, data: { name: 'bank', space_id: spaceId, domains: ['example.com'], username: 'ada', password: PASSWORD, totp_secret: TOTP_SECRET } })).json();
  const mail = await (await request.post(`${base()}/v1/credentials`, { headers, data: { name: 'mail', space_id: spaceId, domains: ['mail.example', 'example.org'], password: PASSWORD } })).json();
  expect(bank.id).toMatch(/^cred_/);

  await signInAsNewOperator(page, 'Vera');
  await page.goto(`${base()}/console/organizations/${orgId}#credentials`);
  const table = page.getByRole('table', { name: 'Credentials' });
  const row = page.getByTestId('credential-bank');
  await expect(row).toContainText('example.com');
  await expect(row).toContainText('username ada');
  await expect(row).toContainText('password');
  await expect(row).toContainText('TOTP');
  await expect(page.getByTestId('credential-mail')).toContainText('example.org');
  await expect(table.getByRole('row')).toHaveCount(3);
  for (const secret of [PASSWORD, TOTP_SECRET]) expect(await page.content()).not.toContain(secret);
  await expectNoSeriousViolations(page);
  await screenshot(page, 'organization-credentials');

  // Rotate: a new password replaces the stored one; the form never shows the old one.
  await row.getByRole('button', { name: 'Rotate bank' }).click();
  const rotate = page.getByRole('form', { name: 'Rotate credential' });
  await expect(rotate.getByLabel('New password', { exact: true })).toHaveValue('');
  await rotate.getByLabel('New password', { exact: true }).fill(ROTATED);
  await expectNoSeriousViolations(page);
  await rotate.getByRole('button', { name: 'Rotate' }).click();
  await expect(rotate).toBeHidden();
  const updated = await (await request.get(`${base()}/v1/credentials/${bank.id}`, { headers })).json();
  expect(Date.parse(updated.updated_at)).toBeGreaterThan(Date.parse(bank.updated_at));
  expect(updated).toMatchObject({ has_password: true, has_totp: true });

  // Delete: gone from the page and from /v1.
  await page.getByTestId('credential-mail').getByRole('button', { name: 'Delete mail' }).click();
  await page.getByRole('button', { name: 'Delete credential' }).click();
  await expect(page.getByTestId('credential-mail')).toHaveCount(0);
  expect((await request.get(`${base()}/v1/credentials/${mail.id}`, { headers })).status()).toBe(404);

  // The audit log names the operator, and no value.
  await page.getByRole('tab', { name: 'Audit log' }).click();
  const audit = page.getByRole('table', { name: 'Audit log' });
  await expect(audit.getByRole('row').filter({ hasText: 'operator.credential.updated' })).toContainText('Vera (console)');
  await expect(audit.getByRole('row').filter({ hasText: 'operator.credential.deleted' })).toContainText('Vera (console)');
  for (const secret of [PASSWORD, ROTATED, TOTP_SECRET]) expect(await page.content()).not.toContain(secret);
});
