import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { expect, type Page } from '@playwright/test';
import { admin } from '../admin-cli';

export const base = () => process.env.E2E_BASE_URL!;

/** The laptop screen the console is designed for, and the size of the README's screenshots. */
export const CONSOLE_VIEWPORT = { width: 1280, height: 800 };

/** A new operator (`operator:create`) signed in to the console in this page. */
export async function signInAsNewOperator(page: Page, name: string): Promise<void> {
  const { console_key: consoleKey } = admin('operator:create', '--name', name);
  await page.goto(`${base()}/console`);
  await page.getByLabel('Console key').fill(consoleKey);
  await page.getByLabel('Console key').press('Enter');
  await expect(page.getByTestId('signed-in-operator')).toHaveText(`Signed in as ${name}`);
}

/** Writes what the page shows now to docs/screenshots/<name>.png (linked from the README). */
export async function screenshot(page: Page, name: string): Promise<void> {
  const folder = path.join(process.cwd(), 'docs', 'screenshots');
  mkdirSync(folder, { recursive: true });
  // Relative times and the focus ring settle before the picture.
  await page.mouse.move(0, 0);
  await page.screenshot({ path: path.join(folder, `${name}.png`), animations: 'disabled', caret: 'hide' });
}
