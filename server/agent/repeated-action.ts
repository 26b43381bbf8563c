import { createHash } from 'node:crypto';
import type { PageObservation } from '../browser/types';

/** How many times in a row one action on an unchanged page is carried out before the model is warned. */
export const REPEATS_BEFORE_WARNING = 3;

/**
 * Counts how many times in a row the same action was asked for on the same page: same URL
 * and same page digest (title and interactive elements with their values; the screenshot is
 * left out, as a blinking caret would change it). Any other action, or the same one on a
 * changed page, starts a new count. The count lives in one run: a resumed task starts
 * afresh, as a human's answer in between is new information anyway.
 */
export class RepeatedActionCounter {
  #lastKey: string | null = null;
  #count = 0;

  /** Registers `action` (its step text) about to be done on `page`; returns how many times in a row it has now been asked. */
  see(action: string, page: PageObservation): number {
    const key = `${action}\n${pageDigest(page)}`;
    this.#count = key === this.#lastKey ? this.#count + 1 : 1;
    this.#lastKey = key;
    return this.#count;
  }
}

function pageDigest(page: PageObservation): string {
  return createHash('sha256').update(JSON.stringify([page.url, page.title, page.elements])).digest('base64url');
}
