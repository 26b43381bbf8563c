// Clicking an element as a person would, at its point, and only it (in-page/click-guard.ts
// says why a point can be wrong by the time it is pressed).
import type { ElementHandle } from 'puppeteer-core';
import { DOM_CLICK_FUNCTION, END_CLICK_GUARD_FUNCTION, GUARD_CLICK_FUNCTION } from './in-page-scripts.js';

// Presses at the element's point before the click goes through the DOM instead. A page
// that moves settles within a press or two; one whose element stays covered (an
// overlay over it) gets the DOM click, as an element without a clickable point does.
const PRESS_ATTEMPTS = 3;

/**
 * Clicks `element` with the mouse at its point, the point computed afresh when a press
 * landed elsewhere (the guard kept it from the page); without a clickable point (covered,
 * zero-sized, off-screen inside a scroller), through the DOM, which still fires the
 * element's handlers and default action.
 */
export async function clickElement(element: ElementHandle<Element>): Promise<void> {
  for (let attempt = 1; attempt <= PRESS_ATTEMPTS; attempt += 1) {
    const guard = await element.evaluateHandle(GUARD_CLICK_FUNCTION);
    let pressed = true;
    try {
      await element.click();
    } catch {
      pressed = false;
    }
    // A click that navigated took the guard's document with it: the click reached the page.
    const reached = await guard.evaluate(END_CLICK_GUARD_FUNCTION).catch(() => true);
    // Released without a wait: the next command goes out behind it, and nothing reads it.
    void guard.dispose().catch(() => undefined);
    if (!pressed) break;
    if (reached) return;
  }
  await element.evaluate(DOM_CLICK_FUNCTION);
}
