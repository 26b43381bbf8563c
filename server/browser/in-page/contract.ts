// What the driver and the page code agree on: the constants both sides read and the
// shapes of what the page functions return. Node code imports this module; the page gets
// it through the bundle (see ../in-page-scripts.ts).

/** Attribute observe() puts on each listed element so `{ ref }` targets resolve. */
export const REF_ATTRIBUTE = 'data-operator-ref';

/** Attribute the replay cache's last successful locate puts on the element it found; the driver targets it. */
export const REPLAY_ATTRIBUTE = 'data-operator-replay';

/** Most elements one observation lists, all frames together. */
export const MAX_OBSERVED_ELEMENTS = 150;

/** Observed names and values are clamped to these many characters. */
export const NAME_LIMIT = 80;
export const VALUE_LIMIT = 200;

/** An element observe() listed in one frame; `ref` is local to that frame's document. */
export interface ObservedElement {
  ref: number;
  role: string;
  name: string;
  tag: string;
  value?: string;
  /** Inside the viewport of its own document. */
  inViewport: boolean;
}

/**
 * An element a string target found, with how well it matched: lower is better. 0 is a
 * CSS selector match; text matches follow, from exact to partial, interactive elements
 * and fields before any other element. Ranks compare across frames.
 */
export type RankedMatch = { element: Element; rank: number } | null;

/** Ranks up to this one are selector matches or whole-text matches on an interactive element or field. */
export const DECISIVE_MATCH_RANK = 2;

export type FramePlacement = 'hidden' | 'offscreen' | 'inViewport';

export type TextOfResult = { kind: 'text'; text: string } | { kind: 'invalid' } | { kind: 'missing' };

/** One localStorage entry, as a device's saved state keeps it (device-state.ts). */
export interface StorageItem {
  name: string;
  value: string;
}
