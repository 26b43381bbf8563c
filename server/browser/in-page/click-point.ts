// Where a click on an element of the main frame presses, as puppeteer's ElementHandle.click()
// finds it, without its waits: puppeteer asks an IntersectionObserver whether the element
// is wholly visible, which answers only with the page's next rendering (a frame interval,
// up to 17 ms, before every press), and reads the viewport's size in a world of its own
// that a new document creates lazily (10 ms and more after a navigation). The element's
// boxes are known at once, in one call.

/**
 * Brings `element` into view (scrolled to the middle, as puppeteer's scrollIntoView does,
 * unless the whole of its box is already in the viewport and in every box that clips it)
 * and answers the middle of its first box that keeps at least a pixel each way within the
 * viewport (puppeteer's clickablePoint); null when none does.
 */
export function clickPoint(element: Element): { x: number; y: number } | null {
  if (!whollyInView(element)) element.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  const { clientWidth, clientHeight } = element.ownerDocument.documentElement;
  for (const rect of element.getClientRects()) {
    const left = Math.max(rect.left, 0);
    const top = Math.max(rect.top, 0);
    const width = Math.min(rect.right, clientWidth) - left;
    const height = Math.min(rect.bottom, clientHeight) - top;
    if (width >= 1 && height >= 1) return { x: left + width / 2, y: top + height / 2 };
  }
  return null;
}

/** What a threshold-1 IntersectionObserver on its window's viewport would say: no part of the box is cut off. */
function whollyInView(element: Element): boolean {
  const view = element.ownerDocument.defaultView ?? window;
  const box = element.getBoundingClientRect();
  const within = (clip: { top: number; left: number; bottom: number; right: number }) =>
    box.top >= clip.top && box.left >= clip.left && box.bottom <= clip.bottom && box.right <= clip.right;
  if (!within({ top: 0, left: 0, bottom: view.innerHeight, right: view.innerWidth })) return false;
  const { documentElement, body } = element.ownerDocument;
  for (let ancestor = parentOf(element); ancestor !== null; ancestor = parentOf(ancestor)) {
    // The root's and the body's overflow is the viewport's, judged above.
    if (ancestor === documentElement || ancestor === body) continue;
    const { overflowX, overflowY } = view.getComputedStyle(ancestor);
    if (overflowX === 'visible' && overflowY === 'visible') continue;
    if (!within(ancestor.getBoundingClientRect())) return false;
  }
  return true;
}

/** The element's parent, crossing out of an open or closed shadow root to its host. */
function parentOf(element: Element): Element | null {
  if (element.parentElement !== null) return element.parentElement;
  const root = element.parentNode;
  return root instanceof ShadowRoot ? root.host : null;
}
