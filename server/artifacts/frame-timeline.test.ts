import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LiveFrame } from '../browser';
import { FrameTimeline } from './frame-timeline';

/** A frame whose picture names it (its bytes are the name). */
function frame(name: string, swappedAt: number): LiveFrame {
  return { data: Buffer.from(name).toString('base64'), width: 10, height: 10, swappedAt };
}

const named = (jpeg: Buffer | null) => (jpeg === null ? null : jpeg.toString());

/** Whether `promise` has settled yet. */
function tracked(promise: Promise<unknown>): { readonly done: boolean } {
  const state = { done: false };
  void promise.then(() => (state.done = true));
  return state;
}

/** Asserts, on fake timers, that `waited` ends exactly `ms` from now: not a millisecond before. */
async function expectEndsAfter(waited: { readonly done: boolean }, ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms - 1);
  expect(waited.done).toBe(false);
  await vi.advanceTimersByTimeAsync(1);
  expect(waited.done).toBe(true);
}

afterEach(() => vi.useRealTimers());

describe('FrameTimeline', () => {
  it('answers the last frame produced between two moments, none after the second', async () => {
    const timeline = new FrameTimeline();
    timeline.see(frame('before', 100));
    let tellUntil: (at: number) => void = () => undefined;
    const picture = timeline.frameBetween(150, new Promise((resolve) => (tellUntil = resolve)));
    timeline.see(frame('effect', 160));
    timeline.see(frame('effect, settled', 170));
    tellUntil(200);
    timeline.see(frame('next action', 210));
    expect(named(await picture)).toBe('effect, settled');
  });

  it('answers the frame before the first moment when the page did not repaint in between', async () => {
    const timeline = new FrameTimeline();
    timeline.see(frame('still page', 100));
    const picture = timeline.frameBetween(150, Promise.resolve(200));
    timeline.see(frame('next action', 210));
    expect(named(await picture)).toBe('still page');
  });

  it('takes a frame produced in between that arrives after the second moment (in flight)', async () => {
    const timeline = new FrameTimeline();
    timeline.see(frame('before', 100));
    const picture = timeline.frameBetween(150, Promise.resolve(200));
    await new Promise((resolve) => setTimeout(resolve, 10));
    timeline.see(frame('effect, delivered late', 190));
    expect(named(await picture)).toBe('effect, delivered late');
  });

  it('takes a frame that arrived before the second moment though Chromium stamped it after (the time it is to be shown)', async () => {
    vi.useFakeTimers();
    const now = Date.now();
    const timeline = new FrameTimeline();
    timeline.see(frame('all keys but the last', now - 10));
    const picture = timeline.frameBetween(now, new Promise((resolve) => setTimeout(() => resolve(now + 20), 20)));
    await vi.advanceTimersByTimeAsync(15);
    timeline.see(frame('every key, here before the next action, stamped after it', now + 30));
    await vi.advanceTimersByTimeAsync(5);
    timeline.see(frame('the next action, here after it', now + 31));
    expect(named(await picture)).toBe('every key, here before the next action, stamped after it');
  });

  it('waits up to a second for a frame in flight (a saturated host delivers late), then answers with the frame before', async () => {
    vi.useFakeTimers();
    const timeline = new FrameTimeline();
    timeline.see(frame('blank', 100));
    const late = timeline.frameBetween(150, Promise.resolve(200));
    await vi.advanceTimersByTimeAsync(800);
    timeline.see(frame('the step left this, delivered late', 140));
    await vi.advanceTimersByTimeAsync(300);
    expect(named(await late)).toBe('the step left this, delivered late');

    const unpainted = timeline.frameBetween(300, Promise.resolve(400));
    const answer = tracked(unpainted);
    await vi.advanceTimersByTimeAsync(900);
    expect(answer.done).toBe(false);
    await vi.advanceTimersByTimeAsync(200);
    expect(named(await unpainted)).toBe('the step left this, delivered late');
  });

  it('answers a wait for an unknown end with what was seen at the end', async () => {
    const timeline = new FrameTimeline();
    const picture = timeline.frameBetween(150, new Promise<number>(() => undefined));
    timeline.see(frame('last step', 160));
    timeline.end();
    expect(named(await picture)).toBe('last step');
    expect(named(await timeline.frameBetween(500, Promise.resolve(600)))).toBe('last step');
  });

  // The waits below are timed on fake timers: a loaded CI host delays real ones by hundreds of milliseconds.
  it('shows a change that painted nothing yet once its first frame comes, or after a bounded wait', async () => {
    vi.useFakeTimers();
    const timeline = new FrameTimeline();
    const now = Date.now();
    timeline.see(frame('previous page', now - 1_000));
    const waiting = tracked(timeline.shown(now - 100));
    timeline.see(frame('the previous document, painted late before the change', now - 150));
    await vi.advanceTimersByTimeAsync(20);
    expect(waiting.done).toBe(false);
    timeline.see(frame('new document', now + 30));
    await vi.advanceTimersByTimeAsync(0);
    expect(waiting.done).toBe(true);

    const inert = new FrameTimeline();
    inert.see(frame('inert page', now - 1_000));
    const nothing = tracked(inert.shown(Date.now() - 10));
    await expectEndsAfter(nothing, 400);
  });

  it('shows a change whose frame, produced during the step, reaches the recording after its end', async () => {
    vi.useFakeTimers();
    const timeline = new FrameTimeline();
    const now = Date.now();
    timeline.see(frame('previous page', now - 1_000));
    const shown = tracked(timeline.shown(now - 200));
    await vi.advanceTimersByTimeAsync(30);
    expect(shown.done).toBe(false);
    timeline.see(frame('new document, delivered late', now - 100));
    await vi.advanceTimersByTimeAsync(0);
    expect(shown.done).toBe(true);
  });

  it("shows a typing step once a frame produced after its end came (its last key, from a compositor behind the page), or after a bounded wait", async () => {
    vi.useFakeTimers();
    const timeline = new FrameTimeline();
    const now = Date.now();
    timeline.see(frame('all keys but the last', now - 20));
    const typing = tracked(timeline.shown(now - 400, now));
    await vi.advanceTimersByTimeAsync(60);
    expect(typing.done).toBe(false);
    timeline.see(frame('the last key, produced after the end', now + 40));
    await vi.advanceTimersByTimeAsync(0);
    expect(typing.done).toBe(true);

    // A page that asks for no repaint (none given) and stays still: the whole wait, bounded.
    const still = new FrameTimeline();
    still.see(frame('every key', now - 10));
    const waited = tracked(still.shown(now - 400, now));
    await expectEndsAfter(waited, 400);
  });

  it('asks a still page for a frame after a typing step, and shows the step as soon as that frame comes', async () => {
    vi.useFakeTimers();
    const now = Date.now();
    let asked = 0;
    const timeline: FrameTimeline = new FrameTimeline(async () => {
      asked += 1;
      setTimeout(() => timeline.see(frame('every key, drawn on request', Date.now())), 20);
    });
    timeline.see(frame('every key', now - 10));
    const shown = tracked(timeline.shown(now - 400, now));
    await expectEndsAfter(shown, 20);
    expect(asked).toBe(1);

    // A frame after the step's end already came: nothing to ask.
    const painted = new FrameTimeline(async () => {
      asked += 1;
    });
    painted.see(frame('the last key, produced after the end', now + 5));
    await painted.shown(now - 400, now);
    // Nor after a step that did not type: its action ended once painted (PageDriver).
    painted.see(frame('a click', now + 10));
    await painted.shown(now + 8);
    expect(asked).toBe(1);
  });

  it("waits for the repaint it asked, not for the first frame to come: the repaint's frame would otherwise be drawn after the next action began", async () => {
    vi.useFakeTimers();
    const now = Date.now();
    let repainted: () => void = () => undefined;
    const timeline = new FrameTimeline(() => new Promise<void>((resolve) => (repainted = resolve)));
    timeline.see(frame('the form', now - 10));
    const shown = tracked(timeline.shown(now - 400, now));
    await vi.advanceTimersByTimeAsync(10);
    // The new document's first frame, by itself, while the screencast restarts.
    timeline.see(frame('the next document', Date.now()));
    await vi.advanceTimersByTimeAsync(10);
    expect(shown.done).toBe(false);
    timeline.see(frame('the next document, drawn on request', Date.now()));
    repainted();
    await vi.advanceTimersByTimeAsync(0);
    expect(shown.done).toBe(true);

    // A repaint that never ends holds the next action for a bounded time.
    const hung = new FrameTimeline(() => new Promise<void>(() => undefined));
    hung.see(frame('the form', now - 10));
    const held = tracked(hung.shown(now - 400, now));
    await expectEndsAfter(held, 400);
  });

  it('shows a change that painted at once, and at the end at once', async () => {
    vi.useFakeTimers();
    const now = Date.now();
    const painted = new FrameTimeline();
    painted.see(frame('clicked', now - 300));
    const shown = tracked(painted.shown(now - 400));
    await vi.advanceTimersByTimeAsync(0);
    expect(shown.done).toBe(true);

    const ended = new FrameTimeline();
    ended.end();
    await ended.shown(now - 400);
  });
});
