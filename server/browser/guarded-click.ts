// Clicking an element as a person would, at its point, and only it (in-page/click-guard.ts
// says why a point can be wrong by the time it is pressed).
import type { ElementHandle } from 'puppeteer-core';
import { CLICK_POINT_FUNCTION, DOM_CLICK_FUNCTION, END_CLICK_GUARD_FUNCTION, GUARD_CLICK_FUNCTION } from './in-page-scripts.js';

// Presses at the element's point before the click goes through the DOM instead. A page
// that moves settles within a press or two; one whose element stays covered (an
// overlay over it) gets the DOM click, as an element without a clickable point does.
const PRESS_ATTEMPTS = 3;

/** A navigation never asked for. */
const NEVER = new Promise<void>(() => undefined);

/**
 * Clicks `element` with the mouse at its point, the point computed afresh when a press
 * landed elsewhere (the guard kept it from the page); without a clickable point (covered,
 * zero-sized, off-screen inside a scroller), through the DOM, which still fires the
 * element's handlers and default action. `navigationRequested`: resolves once the page's
 * main frame asked to navigate since the click started (DriverSession).
 */
export async function clickElement(element: ElementHandle<Element>, navigationRequested: Promise<void> = NEVER): Promise<void> {
  const page = element.frame.page();
  // In the main frame the driver finds the point itself (in-page/click-point.ts), beside
  // the guard; a frame's element is pressed by puppeteer's click, which scrolls the frames
  // around it too.
  const inMainFrame = element.frame === page.mainFrame();
  for (let attempt = 1; attempt <= PRESS_ATTEMPTS; attempt += 1) {
    // A point the page could not answer is no point, as puppeteer's click failing is no press.
    const [guard, point] = await Promise.all([element.evaluateHandle(GUARD_CLICK_FUNCTION), inMainFrame ? element.evaluate(CLICK_POINT_FUNCTION).catch(() => null) : null]);
    let pressed = true;
    try {
      if (!inMainFrame) await element.click();
      else if (point === null) pressed = false;
      else await page.mouse.click(point.x, point.y);
    } catch {
      pressed = false;
    }
    // A click that navigates reached the page (a missed press was kept from it), and its
    // guard's document is on its way out: Chromium holds a command for a document being
    // navigated away from until the next one commits (20 to 30 ms), so it is not asked.
    const reached = await Promise.race([guard.evaluate(END_CLICK_GUARD_FUNCTION).catch(() => true), navigationRequested.then(() => true)]);
    // Released without a wait: the next command goes out behind it, and nothing reads it.
    void guard.dispose().catch(() => undefined);
    if (!pressed) break;
    if (reached) return;
  }
  await element.evaluate(DOM_CLICK_FUNCTION);
}
