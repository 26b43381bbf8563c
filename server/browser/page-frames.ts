// The page's frames seen as one document: observation, element search and text checks
// span the main frame and every visible iframe, same-origin or out-of-process alike.
// Frames are visited main frame first, then depth-first in the order puppeteer lists
// children, so the main frame wins every tie.
import type { ElementHandle, Frame, JSHandle, Page } from 'puppeteer-core';
import {
  DECISIVE_MATCH_RANK,
  type FramePlacement,
  type ObservedElement,
  type RankedMatch,
  type TextOfResult,
} from './in-page/contract.js';
import {
  FIND_BY_REF_SCRIPT,
  FRAME_PLACEMENT_FUNCTION,
  HAS_TEXT_SCRIPT,
  OBSERVE_SCRIPT,
  TEXT_OF_SCRIPT,
} from './in-page-scripts.js';
import type { InteractiveElement } from './types.js';

/**
 * How long one child frame may take to answer. Frames are often third-party (ads,
 * widgets) and a busy one must not hold up an action on the rest of the page.
 */
const CHILD_FRAME_BUDGET_MS = 3_000;

/** Where an observed ref points: the frame and the ref local to its document. */
export interface RefTarget {
  frame: Frame;
  localRef: number;
}

export interface FramesObservation {
  elements: InteractiveElement[];
  refTargets: Map<number, RefTarget>;
}

/** A search for the element a string target means (FIND_CLICK_TARGET_SCRIPT or FIND_FIELD_SCRIPT). */
export type FindScript = (args: { target: string }) => RankedMatch;

interface PlacedFrame {
  frame: Frame;
  /** False when the frame's iframe, or one around it, is outside the viewport. */
  inViewport: boolean;
}

/**
 * Interactive elements of all visible frames, at most `limit` in all, numbered 1..n in
 * frame order. Over the limit, elements the user currently sees win across frames.
 * A failure in the main frame is thrown; a child frame that fails (it is navigating or
 * going away) contributes nothing.
 */
export async function observeFrames(page: Page, limit: number): Promise<FramesObservation> {
  const frames = await placedFrames(page);
  const observed = await Promise.all(
    frames.map(({ frame }, index) => {
      const observation = frame.evaluate(OBSERVE_SCRIPT, { limit });
      return index === 0 ? observation : withinBudget(observation, []);
    }),
  );
  const candidates = frames.flatMap(({ frame, inViewport }, index) =>
    (observed[index] ?? []).map((element) => ({ frame, element, seen: inViewport && element.inViewport })),
  );
  const inView = candidates.filter((candidate) => candidate.seen);
  const outOfView = candidates.filter((candidate) => !candidate.seen);
  const chosen = new Set([...inView, ...outOfView].slice(0, limit));
  const elements: InteractiveElement[] = [];
  const refTargets = new Map<number, RefTarget>();
  for (const candidate of candidates) {
    if (!chosen.has(candidate)) continue;
    const ref = elements.length + 1;
    refTargets.set(ref, { frame: candidate.frame, localRef: candidate.element.ref });
    elements.push(toInteractiveElement(ref, candidate.element));
  }
  return { elements, refTargets };
}

/** The element an observed ref points at, or null when it or its frame is gone. */
export async function elementByRef(target: RefTarget | undefined): Promise<ElementHandle<Element> | null> {
  if (target === undefined || target.frame.detached) return null;
  const found = await target.frame.evaluateHandle(FIND_BY_REF_SCRIPT, { ref: target.localRef });
  const element = found.asElement();
  if (element === null) await found.dispose();
  return element as ElementHandle<Element> | null;
}

/**
 * The element a string target means. The main frame is searched first and decides
 * alone when it has a selector or whole-text match; otherwise the best-ranked match of
 * all visible frames wins, so an exact "Pay" button in a payment iframe beats a main
 * frame link that merely contains "pay".
 */
export async function findInFrames(
  page: Page,
  script: FindScript,
  target: string,
): Promise<ElementHandle<Element> | null> {
  const main = await rankedMatch(page.mainFrame(), script, target);
  if (main !== null && main.rank <= DECISIVE_MATCH_RANK) return takeElement(main.handle);
  const children = (await placedFrames(page)).slice(1);
  const searches = children.map(({ frame }) => rankedMatch(frame, script, target));
  const matches = [main, ...(await Promise.all(searches.map((search) => withinBudget(search, null))))];
  let best: FrameMatch | null = null;
  for (const match of matches) {
    if (match !== null && (best === null || match.rank < best.rank)) best = match;
  }
  // Every other match is released, also one that answers after its frame's budget.
  for (const search of [Promise.resolve(main), ...searches]) {
    void search
      .then((match) => (match !== null && match !== best ? match.handle.dispose() : undefined))
      .catch(() => undefined);
  }
  return best === null ? null : takeElement(best.handle);
}

/**
 * Whether any visible frame shows the text, answered as soon as one does. Never throws:
 * a frame in the middle of a navigation simply does not show it yet.
 */
export async function framesShowText(page: Page, text: string): Promise<boolean> {
  const frames = await placedFrames(page);
  return new Promise((resolve) => {
    let unanswered = frames.length;
    for (const [index, { frame }] of frames.entries()) {
      const check = frame.evaluate(HAS_TEXT_SCRIPT, { text });
      void (index === 0 ? check : withinBudget(check, false))
        .catch(() => false)
        .then((shown) => {
          unanswered -= 1;
          if (shown || unanswered === 0) resolve(shown);
        });
    }
  });
}

/**
 * Text of the first element a selector matches, in the main frame or else the first
 * child frame that has one. Validity of the selector is judged by the main frame; a
 * failing child frame counts as having no match.
 */
export async function textInFrames(page: Page, selector: string): Promise<TextOfResult> {
  const main = await page.mainFrame().evaluate(TEXT_OF_SCRIPT, { selector });
  if (main.kind !== 'missing') return main;
  const children = (await placedFrames(page)).slice(1);
  const missing: TextOfResult = { kind: 'missing' };
  const results = await Promise.all(
    children.map(({ frame }) => withinBudget(frame.evaluate(TEXT_OF_SCRIPT, { selector }), missing)),
  );
  return results.find((result) => result.kind === 'text') ?? main;
}

interface FrameMatch {
  handle: JSHandle<RankedMatch>;
  rank: number;
}

async function rankedMatch(frame: Frame, script: FindScript, target: string): Promise<FrameMatch | null> {
  const handle = await frame.evaluateHandle(script, { target });
  if (handle.remoteObject().subtype === 'null') {
    await handle.dispose();
    return null;
  }
  // Only the rank is read: the match's element need not serialize by value (React keeps a
  // cyclic object on every element it renders, and a by-value copy of it fails).
  const rank = await handle.getProperty('rank');
  try {
    return { handle, rank: (await rank.jsonValue()) as number };
  } finally {
    await rank.dispose();
  }
}

async function takeElement(match: JSHandle<RankedMatch>): Promise<ElementHandle<Element> | null> {
  try {
    const property = await match.getProperty('element');
    const element = property.asElement();
    if (element === null) await property.dispose();
    return element as ElementHandle<Element> | null;
  } finally {
    await match.dispose();
  }
}

/**
 * The main frame and every child frame whose iframe can be seen, depth-first. Frames
 * showing a Chromium error page (a load that failed or was blocked by the allow-list)
 * are left out: their content is the browser's, not the site's.
 */
async function placedFrames(page: Page): Promise<PlacedFrame[]> {
  const place = async (frame: Frame, inViewport: boolean): Promise<PlacedFrame[]> => {
    const children = await Promise.all(
      frame.childFrames().map(async (child) => {
        if (child.detached || child.url().startsWith('chrome-error:')) return [];
        // A frame that goes away while being looked at counts as hidden.
        const placement = await withinBudget(ownerPlacement(child), 'hidden');
        if (placement === 'hidden') return [];
        return place(child, inViewport && placement === 'inViewport');
      }),
    );
    return [{ frame, inViewport }, ...children.flat()];
  };
  return place(page.mainFrame(), true);
}

async function ownerPlacement(frame: Frame): Promise<FramePlacement> {
  const owner = await frame.frameElement();
  if (owner === null) return 'hidden';
  try {
    return await owner.evaluate(FRAME_PLACEMENT_FUNCTION);
  } finally {
    await owner.dispose();
  }
}

/** The work's result, or `fallback` when it fails or outlasts CHILD_FRAME_BUDGET_MS. */
async function withinBudget<T>(work: Promise<T>, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), CHILD_FRAME_BUDGET_MS);
  });
  try {
    return await Promise.race([work.catch(() => fallback), expired]);
  } finally {
    clearTimeout(timer);
  }
}

function toInteractiveElement(ref: number, observed: ObservedElement): InteractiveElement {
  const element: InteractiveElement = { ref, role: observed.role, name: observed.name, tag: observed.tag };
  if (observed.value !== undefined) element.value = observed.value;
  return element;
}
