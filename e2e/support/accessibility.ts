import AxeBuilder from '@axe-core/playwright';
import { expect, type Page } from '@playwright/test';

/**
 * Runs axe on the page as it settles (WCAG 2.0-2.2 A and AA rules, and axe's best
 * practices) and fails with each serious or critical violation named, its help text and
 * the elements it found. Running animations and transitions that end, end first: a form fading in
 * has colours, mid-fade, that nobody reads (a submit button's label measured at 4.21:1
 * while its modal still faded in).
 */
export async function expectNoSeriousViolations(page: Page): Promise<void> {
  await page.evaluate(() =>
    Promise.all(
      document
        .getAnimations()
        // An endless one (a spinner) never finishes: it is measured as it is.
        .filter((animation) => animation.effect?.getComputedTiming().endTime !== Infinity)
        .map((animation) => animation.finished.catch(() => undefined)),
    ),
  );
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice']).analyze();
  const serious = results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id} (${violation.impact}): ${violation.help} — ${violation.nodes.map((node) => `${node.target.join(' ')} (${node.failureSummary?.replace(/\s+/g, ' ') ?? ''})`).join(', ')}`);
  expect(serious, `accessibility violations on ${page.url()}`).toEqual([]);
}
