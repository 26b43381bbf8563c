import { describe, expect, it } from 'vitest';
import type { LiveFrame } from '../browser';
import { FrameTimeline } from './frame-timeline';

/** A frame whose picture names it (its bytes are the name). */
function frame(name: string, swappedAt: number): LiveFrame {
  return { data: Buffer.from(name).toString('base64'), width: 10, height: 10, swappedAt };
}

const named = (jpeg: Buffer | null) => (jpeg === null ? null : jpeg.toString());

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

  it('answers a wait for an unknown end with what was seen at the end', async () => {
    const timeline = new FrameTimeline();
    const picture = timeline.frameBetween(150, new Promise<number>(() => undefined));
    timeline.see(frame('last step', 160));
    timeline.end();
    expect(named(await picture)).toBe('last step');
    expect(named(await timeline.frameBetween(500, Promise.resolve(600)))).toBe('last step');
  });

  it('shows a change that painted nothing yet once its first frame comes, or after a bounded wait', async () => {
    const timeline = new FrameTimeline();
    const now = Date.now();
    timeline.see(frame('previous page', now - 1_000));
    let shown = false;
    const waiting = timeline.shown(now - 100).then(() => (shown = true));
    timeline.see(frame('the previous document, painted late before the change', now - 150));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(shown).toBe(false);
    timeline.see(frame('new document', now + 30));
    await waiting;

    const inert = new FrameTimeline();
    inert.see(frame('inert page', now - 1_000));
    const started = performance.now();
    await inert.shown(Date.now() - 10);
    expect(performance.now() - started).toBeGreaterThanOrEqual(350);
  });

  it('shows a change whose frame, produced during the step, reaches the recording after its end', async () => {
    const timeline = new FrameTimeline();
    const now = Date.now();
    timeline.see(frame('previous page', now - 1_000));
    const started = performance.now();
    const shown = timeline.shown(now - 200);
    setTimeout(() => timeline.see(frame('new document, delivered late', now - 100)), 30);
    await shown;
    expect(performance.now() - started).toBeLessThan(300);
  });

  it("shows a typing step once a frame produced after its end came (its last key, from a compositor behind the page), or after a bounded wait", async () => {
    const timeline = new FrameTimeline();
    const now = Date.now();
    timeline.see(frame('all keys but the last', now - 20));
    let shown = false;
    const typing = timeline.shown(now - 400, now).then(() => (shown = true));
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(shown).toBe(false);
    timeline.see(frame('the last key, produced after the end', now + 40));
    await typing;

    // A page that asks for no repaint (none given) and stays still: the whole wait, bounded.
    const still = new FrameTimeline();
    still.see(frame('every key', now - 10));
    const started = performance.now();
    await still.shown(now - 400, now);
    expect(performance.now() - started).toBeGreaterThanOrEqual(120);
    expect(performance.now() - started).toBeLessThan(400);
  });

  it('asks a still page for a frame after a typing step, and shows the step as soon as that frame comes', async () => {
    const now = Date.now();
    let asked = 0;
    const timeline: FrameTimeline = new FrameTimeline(async () => {
      asked += 1;
      setTimeout(() => timeline.see(frame('every key, drawn on request', Date.now())), 20);
    });
    timeline.see(frame('every key', now - 10));
    const started = performance.now();
    await timeline.shown(now - 400, now);
    expect(asked).toBe(1);
    expect(performance.now() - started).toBeLessThan(100);

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

  it('shows a change that painted at once, and at the end at once', async () => {
    const now = Date.now();
    const painted = new FrameTimeline();
    painted.see(frame('clicked', now - 300));
    const started = performance.now();
    await painted.shown(now - 400);
    expect(performance.now() - started).toBeLessThan(100);

    const ended = new FrameTimeline();
    ended.end();
    await ended.shown(now - 400);
  });
});
