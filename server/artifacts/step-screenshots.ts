import type { Logger } from '../core/log';
import { settledWithin } from '../core/settled-within';
import type { RetryingWrites } from '../storage';
import type { PageEffect } from '../browser';
import type { ActiveRecording } from './recorder';

export interface StepScreenshotsDeps {
  /** The object store, through writes that outlast its outages. */
  writes: RetryingWrites;
  log: Logger;
  /** The run's recording: its frames are the steps' pictures. */
  recording: Promise<ActiveRecording>;
  /** The step's screenshot could not be kept: its step must stop pointing at it. */
  forget: (key: string) => Promise<void>;
}

// A capture is given up past this: a hung page must not keep a run's end waiting.
const CAPTURE_TIMEOUT_MS = 5_000;

/**
 * The JPEG of each step of one run, kept without holding the step: the step is written at
 * once with the key its picture will have, and the picture follows, from the recording's
 * screencast, into the object store. A step's picture is the last frame painted after the
 * step and before the next action on the page starts (so it shows the step's effect and
 * none of the next one's), or, when the page did not repaint in between, the last frame
 * before the step's end. A step that changed the page holds the next action until its
 * effect is shown (FrameTimeline.shown: a moment at most); steps that only read or wait
 * hold nothing. The byte route waits a moment for a picture still on its way
 * (task-artifact-bytes.ts), so a client told the task ended (written before the run's
 * last pictures are, settled()) finds every one.
 */
export class StepScreenshots {
  readonly #deps: StepScreenshotsDeps;
  readonly #pending = new Set<Promise<void>>();
  /** The steps whose next change of the page has not started yet: told when it does. */
  #awaitingNextAction: Array<{ since: number; change: PageChange | null; navigatedAt: number; tell: (at: number) => void }> = [];
  /** The last change of the page since the last step was kept: that step's effect. */
  #change: PageChange | null = null;
  /** The showing of the steps before a wait, which went on without it: the next action meets it. */
  #showing: Promise<void> = Promise.resolve();
  /** The recording, once it runs: a step's window of frames opens as the step is kept. */
  #recording: ActiveRecording | null = null;

  constructor(deps: StepScreenshotsDeps) {
    this.#deps = deps;
    deps.recording.then((recording) => (this.#recording = recording)).catch(() => undefined);
  }

  /**
   * Starts keeping, under `key`, the page as it is once what was done before `since` (ms
   * since the epoch: the step's end) has painted. `capture` takes a picture of the page
   * for a step the recording has no frame for (it could not start). `navigatedAt`: when the
   * page last navigated (PageDriver.navigatedAt), which tells a step that navigated.
   */
  keep(key: string, since: number, capture: () => Promise<Buffer>, navigatedAt = 0): void {
    const change = this.#change;
    this.#change = null;
    const nextAction = new Promise<number>((tell) => this.#awaitingNextAction.push({ since, change, navigatedAt, tell }));
    const recording = this.#recording;
    const picture = recording !== null ? recording.frameBetween(since, nextAction) : this.#deps.recording.then((started) => started.frameBetween(since, nextAction));
    const kept = this.#keep(key, picture, capture).finally(() => this.#pending.delete(kept));
    this.#pending.add(kept);
  }

  /**
   * An action on the page is about to start, once this resolves: what it does or waits
   * for belongs to no earlier step's picture, so the effect of the step before it is shown
   * first. `effect`: what the action's own effect will paint. A wait changes nothing, so it
   * starts at once: the pictures before it still end once their effect is shown, what the
   * page paints meanwhile is in them as it would be were the wait held (the page does not
   * know it is watched), and the next action that changes the page waits for them.
   */
  async actionStarting(effect: PageEffect): Promise<void> {
    const showing = this.#showBefore(Date.now());
    if (effect === 'watches') {
      showing.catch(() => undefined); // the next action, or the run's end (shownAll), meets it
      this.#showing = showing;
      return;
    }
    await showing;
    this.#change = { at: Date.now(), typed: effect === 'types' };
  }

  /** The run ends: once every step's effect is shown, as before any other action. */
  async shownAll(): Promise<void> {
    await this.#showBefore(Date.now());
  }

  /**
   * Shows the effect of the steps still awaiting the next action, once the ones before
   * them are, and ends their pictures there. `asked`: when the next action asked.
   */
  #showBefore(asked: number): Promise<void> {
    const awaiting = this.#awaitingNextAction;
    this.#awaitingNextAction = [];
    const before = this.#showing;
    return (async () => {
      await before;
      // Only the latest step that changed the page can have an effect still to paint. After
      // typing, a frame produced after now: Chromium stamps a frame up to a frame interval
      // ahead of its drawing, and the typing step's end (its paint) can be closer than that
      // to the frame drawn just before its last key. After a navigation too: the page left
      // repaints as it is clicked (a button's state, a field's blur), which is a frame since
      // the change began, and the new document's first frame can come after the next action
      // started (60 ms and more after its load on a slow host): the step kept the old page.
      const changed = awaiting.findLast((step) => step.change !== null);
      const change = changed?.change;
      if (changed !== undefined && change != null) {
        const paintsAfterItsEnd = change.typed || changed.navigatedAt >= change.at;
        await (await this.#deps.recording).shown(change.at, paintsAfterItsEnd ? Math.max(changed.since, asked) : null);
      }
      const at = Date.now();
      for (const step of awaiting) step.tell(at);
    })();
  }

  /** Once the recording whose frames the pictures are runs (or could not start). */
  async recordingStarted(): Promise<void> {
    await this.#deps.recording;
  }

  /** Once every picture started is stored, or given up. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all(this.#pending);
  }

  async #keep(key: string, picture: Promise<Buffer | null>, capture: () => Promise<Buffer>): Promise<void> {
    const { writes, log } = this.#deps;
    const forget = async () => {
      await this.#deps.forget(key).catch((forgetError: unknown) => log.error({ err: forgetError, key }, 'could not unlink a step from its missing screenshot'));
    };
    try {
      const jpeg = (await picture) ?? (await settledWithin(capture(), CAPTURE_TIMEOUT_MS));
      if (jpeg === null) throw new Error('the page could not be captured in time');
      // Kept once the store takes it, now or after an outage; the step loses its picture only if it never does.
      await writes.put(key, jpeg, 'image/jpeg', { stored: async () => undefined, gaveUp: forget });
    } catch (error) {
      log.warn({ err: error, key }, 'step screenshot not kept');
      await forget();
    }
  }
}

/** A change of the page an action started: when, and whether it typed. */
interface PageChange {
  at: number;
  typed: boolean;
}
