import { expect, test } from './support/test';
import { expectNoSeriousViolations } from './support/accessibility';

const baseUrl = () => process.env.E2E_BASE_URL!;

test('the home page links to the API reference', async ({ page }) => {
  await page.goto(baseUrl());
  await expect(page.getByRole('heading', { name: 'Browser Device Operator Service' })).toBeVisible();
  await expectNoSeriousViolations(page);
  await page.getByRole('link', { name: 'API reference' }).click();
  await expect(page).toHaveURL(/\/docs$/);
});

test('/docs renders the OpenAPI reference with the routes', async ({ page }) => {
  await page.goto(`${baseUrl()}/docs`);
  await expect(page.getByText('Browser Device Operator Service').first()).toBeVisible({ timeout: 20_000 });
  await expect(page.getByText('Check the calling API key').first()).toBeVisible();
  await expect(page.getByText('0.1.0').first()).toBeVisible();
});
