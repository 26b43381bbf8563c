import type { LiveFrame } from '../browser';
import { settledWithin } from '../core/settled-within';

// A frame produced just before a moment reaches the recorder a little after it (encoding,
// the DevTools connection; 15 to 45 ms on a quiet host, up to 90 ms seen on a loaded one,
// and a host four times slower kept an earlier page as a navigation's picture with a
// 150 ms wait): how long frameBetween() still waits for one. It holds only the picture,
// never the next action (nor a run's end: the recording's end answers every wait): a
// step's last frame, produced before its end, may arrive after the next action started.
const FRAME_IN_FLIGHT_MS = 1_000;

// How long shown() waits for a frame: the first of a change that painted nothing yet, and,
// after a step that typed or navigated, the one it asks of the page (a repaint). A new
// document paints within a frame or two of its load on a quiet host, and a repaint takes
// about 25 ms; on a saturated one the compositor can take hundreds of milliseconds. A
// change that repaints nothing at all (a click on an inert spot) costs this much, once.
const PAINT_WAIT_MS = 400;

// The frames a wait keeps, and the timeline remembers: a screencast sends a few a second,
// and a step's window is decided within moments of its end.
const RECENT_FRAMES = 8;

/** A wait for the frames produced from `since` to `until` (Infinity until it is known). */
interface FrameWaiter {
  since: number;
  until: number;
  /** How many frames had arrived when `until` was told (Infinity until it is). */
  arrivedByUntil: number;
  /** The last frame produced by `since`. */
  before: LiveFrame | null;
  /** The frames produced after `since`, the latest last (at most RECENT_FRAMES). */
  after: LiveFrame[];
  /** Ends the wait with the last frame produced by `until`, or else `before`. */
  settle(): void;
}

/** A wait for any frame produced after `since`. */
interface PaintWait {
  since: number;
  done(): void;
}

/**
 * The frames one recording saw, by the time the compositor produced them (`swappedAt`),
 * answering what a step's picture is: the page between two moments, and whether the page
 * has painted since a moment. Frames arrive in the order they were produced; once the
 * recording ends (end()), every wait is answered with what was seen.
 */
export class FrameTimeline {
  /** The last frames seen, the latest last (at most RECENT_FRAMES). */
  #recent: LiveFrame[] = [];
  #ended = false;
  /**
   * Each remembered frame's place in the order of arrival, and its time. Chromium stamps a
   * frame with the time it is to be shown, up to a frame interval after it was drawn and
   * ahead of this process's clock: a frame that arrived before a moment was drawn before
   * it, whatever its stamp says (a typing step's repaint, here in the millisecond the next
   * action started but stamped after it, was left out of the step's window, and the
   * step's picture missed keys).
   */
  readonly #arrivals = new WeakMap<LiveFrame, { order: number; at: number }>();
  #arrived = 0;
  readonly #waiters = new Set<FrameWaiter>();
  readonly #paintWaits = new Set<PaintWait>();
  readonly #repaint: () => Promise<void>;

  /** `repaint` asks the page for a frame of how it is now (LiveView.repaint). */
  constructor(repaint: () => Promise<void> = async () => undefined) {
    this.#repaint = repaint;
  }

  /** A frame reached the recording. */
  see(frame: LiveFrame): void {
    this.#arrivals.set(frame, { order: this.#arrived, at: Date.now() });
    this.#arrived += 1;
    remember(this.#recent, frame);
    for (const waiter of this.#waiters) {
      if (frame.swappedAt <= waiter.since) waiter.before = frame;
      else remember(waiter.after, frame);
    }
    for (const wait of this.#paintWaits) if (frame.swappedAt > wait.since) wait.done();
  }

  /** No more frames come: every wait ends with what it saw. */
  end(): void {
    this.#ended = true;
    for (const waiter of this.#waiters) waiter.settle();
    for (const wait of this.#paintWaits) wait.done();
  }

  /**
   * The page between `since` and `until` (ms since the epoch): a step's effect, from its
   * end to the start of the next change. The last frame produced in between; when none
   * was (the page did not repaint after the step), the last one before `since`. `until`
   * may never come (the run's last step): then what was seen until the end. A JPEG; null
   * without any frame.
   */
  frameBetween(since: number, until: Promise<number>): Promise<Buffer | null> {
    const latest = this.#recent.at(-1) ?? null;
    if (this.#ended) return Promise.resolve(latest === null ? null : jpegOf(latest));
    return new Promise<Buffer | null>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const waiter: FrameWaiter = {
        since,
        until: Infinity,
        arrivedByUntil: Infinity,
        before: this.#recent.findLast((frame) => frame.swappedAt <= since) ?? null,
        after: this.#recent.filter((frame) => frame.swappedAt > since),
        settle: () => {
          clearTimeout(timer);
          if (!this.#waiters.delete(waiter)) return;
          const frame = waiter.after.findLast((seen) => this.#drawnBy(seen, waiter)) ?? waiter.before;
          resolve(frame === null ? null : jpegOf(frame));
        },
      };
      this.#waiters.add(waiter);
      void until.then((at) => {
        // Told as the next action starts: no frame arrived between that and this.
        waiter.until = at;
        waiter.arrivedByUntil = this.#arrived;
        // A frame produced in between may still be on its way.
        if (waiter.after.some((frame) => this.#drawnBy(frame, waiter))) waiter.settle();
        else timer = setTimeout(() => waiter.settle(), FRAME_IN_FLIGHT_MS);
      });
    });
  }

  /**
   * Resolves once a frame the page produced after `changedAt` (the start of an action that
   * changed it) has been seen: at once when one was; otherwise once one comes (a frame
   * reaches the recording tens of milliseconds after it was produced, and on a saturated
   * host the compositor is late), PAINT_WAIT_MS at most (a change may repaint nothing).
   * At the end, at once. The action itself ended only once the page had painted its
   * effect (PageDriver), so frames produced after its end are no longer its own, but for
   * typing's and a navigation's: `endedBy`, the end of such a step, is then waited past as
   * well. Typing's last key can be drawn after its end by a compositor behind its page;
   * on a quiet host it was drawn before, and no frame follows a still page by itself, so
   * one is asked of the page (a repaint), whose own frame is waited for (PAINT_WAIT_MS at
   * most), not merely the first frame to come: a repaint still under way as the next
   * action starts draws the page before that action, stamped after it began, which would
   * pass for that action's effect (an in-place click's picture kept the page before it).
   */
  async shown(changedAt: number, endedBy: number | null = null): Promise<void> {
    await this.#paintedAfter(changedAt, PAINT_WAIT_MS);
    if (endedBy === null || this.#paintedSince(endedBy)) return;
    // A frame drawn from now on shows the step's effect: the step ended after the page committed it.
    const repainted = settledWithin(this.#repaint().catch(() => undefined), PAINT_WAIT_MS);
    await Promise.all([this.#paintedAfter(endedBy, PAINT_WAIT_MS), repainted]);
  }

  /** Whether `frame` was drawn by the waiter's `until`: stamped by then, or here by then. */
  #drawnBy(frame: LiveFrame, waiter: FrameWaiter): boolean {
    if (frame.swappedAt <= waiter.until) return true;
    const arrival = this.#arrivals.get(frame);
    // Arrived before `until` was told, and by its time (a wait begun after the next action started is told at once).
    return arrival !== undefined && arrival.order < waiter.arrivedByUntil && arrival.at <= waiter.until;
  }

  /** Whether a frame produced after `since` has been seen, or none will come (the end). */
  #paintedSince(since: number): boolean {
    return this.#ended || this.#recent.some((frame) => frame.swappedAt > since);
  }

  /** Resolves once a frame produced after `since` has been seen, after `timeoutMs`, or at the end. */
  #paintedAfter(since: number, timeoutMs: number): Promise<void> {
    if (this.#paintedSince(since)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const wait: PaintWait = {
        since,
        done: () => {
          clearTimeout(timer);
          this.#paintWaits.delete(wait);
          resolve();
        },
      };
      this.#paintWaits.add(wait);
      timer = setTimeout(wait.done, timeoutMs);
    });
  }
}

/** Adds `frame` to `frames`, forgetting the oldest past RECENT_FRAMES. */
function remember(frames: LiveFrame[], frame: LiveFrame): void {
  frames.push(frame);
  if (frames.length > RECENT_FRAMES) frames.shift();
}

export function jpegOf(frame: LiveFrame): Buffer {
  return Buffer.from(frame.data, 'base64');
}
