// A click's guard against landing on something else. A click is a point: the driver
// computes the element's point, then presses the mouse there, a few DevTools round trips
// later. A page that moved meanwhile (text arriving late above the element, a banner
// sliding in, an overlay) receives the press on whatever is at that point now. The guard
// sees the press before the page does; one that does not start on the element never
// reaches the page, and the driver tries again.

/** The mouse events of a click, in the order a press makes them. */
const CLICK_EVENTS = ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click'] as const;

// A guard whose driver never came back (its process died mid-click) must not keep
// stopping presses, a person's among them: it ends by itself.
const GUARD_LIFETIME_MS = 5_000;

/** A guard on the element's window, until ended; `missed` tells whether a press went elsewhere. */
export interface ClickGuard {
  missed: boolean;
  end(): void;
}

/**
 * Guards the next press at `element`'s point (the driver holds the guard as a handle). A
 * press that starts on the element is the element's, wherever its release lands (a menu
 * that opens under the pointer as it is pressed takes the release, as it would a
 * person's); one that starts elsewhere is kept from the page, release and click included.
 */
export function guardClick(element: Element): ClickGuard {
  const view = element.ownerDocument.defaultView ?? window;
  let judged = false;
  const guard: ClickGuard = {
    missed: false,
    end: () => {
      clearTimeout(timer);
      for (const type of CLICK_EVENTS) view.removeEventListener(type, check, true);
    },
  };
  const check = (event: Event) => {
    // Events the page makes itself are its own business; only the press is guarded.
    if (!event.isTrusted) return;
    if (!judged) {
      judged = true;
      guard.missed = !event.composedPath().includes(element);
    }
    if (!guard.missed) return;
    event.stopImmediatePropagation();
    event.preventDefault();
  };
  for (const type of CLICK_EVENTS) view.addEventListener(type, check, true);
  const timer = setTimeout(guard.end, GUARD_LIFETIME_MS);
  return guard;
}

/** Ends the guard: whether the press started on the element. */
export function endClickGuard(guard: ClickGuard): boolean {
  guard.end();
  return !guard.missed;
}
