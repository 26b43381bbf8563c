// Bringing a click's element into view, as puppeteer's ElementHandle.click() does, without
// its wait: puppeteer asks an IntersectionObserver whether the element is wholly visible,
// and an observer answers only with the page's next rendering, a frame interval (up to
// 17 ms) before every press. The element's boxes are known at once.

/**
 * Scrolls `element` to the middle of the view (puppeteer's scrollIntoView) unless the
 * whole of its box is already in its window's viewport and in every box that clips it.
 */
export function bringIntoView(element: Element): void {
  if (whollyInView(element)) return;
  element.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
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
