import { describe, expect, it } from 'vitest';
import type { LiveFrame } from '../browser';
import { createLogger } from '../core/log';
import { RetryingWrites, type ObjectStore } from '../storage';
import { FrameTimeline } from './frame-timeline';
import type { ActiveRecording } from './recorder';
import { StepScreenshots } from './step-screenshots';

function frame(name: string, swappedAt: number): LiveFrame {
  return { data: Buffer.from(name).toString('base64'), width: 10, height: 10, swappedAt };
}

/** Step pictures over a timeline the test feeds, stored in a map. */
async function harness() {
  const timeline = new FrameTimeline();
  const recording: ActiveRecording = {
    stop: async () => timeline.end(),
    frameBetween: (since, until) => timeline.frameBetween(since, until),
    shown: (changedAt, endedBy) => timeline.shown(changedAt, endedBy),
  };
  const stored = new Map<string, string>();
  const store = { put: async (key: string, body: Buffer) => void stored.set(key, body.toString()) } as unknown as ObjectStore;
  const log = createLogger('silent');
  const screenshots = new StepScreenshots({ writes: new RetryingWrites(store, log), log, recording: Promise.resolve(recording), forget: async () => undefined });
  const capture = async () => Buffer.from('captured');
  // As the task runner does before its first step.
  await screenshots.recordingStarted();
  return { timeline, recording, stored, screenshots, capture };
}

describe('StepScreenshots', () => {
  it("holds the next change until the step that changed the page has painted (a compositor late under load)", async () => {
    const { timeline, recording, stored, screenshots, capture } = await harness();
    timeline.see(frame('previous page', Date.now() - 1_000));
    await screenshots.actionStarting('changes'); // the navigation
    const stepEnd = Date.now();
    screenshots.keep('navigate', stepEnd, capture);
    // The new page paints 150 ms after the step, long after the next action was ready.
    setTimeout(() => timeline.see(frame('new page', Date.now())), 150);
    const started = performance.now();
    await screenshots.actionStarting('changes'); // the next click
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    timeline.see(frame('clicked', Date.now() + 1));
    await recording.stop();
    await screenshots.settled();
    expect(stored.get('navigate')).toBe('new page');
  });

  it("shows a click that navigated by the new document's first frame, not by the old one's repaint as it was clicked; a wait after it starts at once, the next change waits for that frame", async () => {
    const { timeline, recording, stored, screenshots, capture } = await harness();
    timeline.see(frame('form', Date.now() - 1_000));
    await screenshots.actionStarting('changes'); // the click on Submit
    // The form repaints as it is clicked (the button's state), then its page is left.
    timeline.see(frame('form, clicked', Date.now() + 1));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const navigatedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 5));
    screenshots.keep('click', Date.now(), capture, navigatedAt);
    // The new document's first frame comes 60 ms after the step's end (a slow host).
    setTimeout(() => timeline.see(frame('result', Date.now())), 60);
    let started = performance.now();
    await screenshots.actionStarting('watches'); // wait for "Welcome", there at once
    expect(performance.now() - started).toBeLessThan(30);
    screenshots.keep('wait', Date.now(), capture);
    started = performance.now();
    await screenshots.actionStarting('types'); // the next field
    expect(performance.now() - started).toBeGreaterThanOrEqual(40);
    timeline.see(frame('result, typed', Date.now() + 1));
    await screenshots.shownAll(); // the run's end
    await recording.stop();
    await screenshots.settled();
    expect(stored.get('click')).toBe('result');
    expect(stored.get('wait')).toBe('result');
  });

  it("holds nothing once a change painted: its picture is its last frame, arriving after the next action started", async () => {
    const { timeline, recording, stored, screenshots, capture } = await harness();
    timeline.see(frame('before', Date.now() - 1_000));
    await screenshots.actionStarting('changes'); // a click
    timeline.see(frame('first repaint', Date.now() + 1));
    const lastPaintAt = Date.now() + 5;
    screenshots.keep('click', lastPaintAt + 5, capture);
    const started = performance.now();
    await screenshots.actionStarting('changes'); // the next click
    expect(performance.now() - started).toBeLessThan(50);
    // The click's last frame, produced before the step's end, reaches the recording 100 ms late.
    await new Promise((resolve) => setTimeout(resolve, 100));
    timeline.see(frame('clicked', lastPaintAt));
    timeline.see(frame('next click', Date.now() + 1));
    await recording.stop();
    await screenshots.settled();
    expect(stored.get('click')).toBe('clicked');
  });

  it("holds the next action until a typing step's last key came, produced after the step's end by a compositor behind the page", async () => {
    const { timeline, recording, stored, screenshots, capture } = await harness();
    timeline.see(frame('empty field', Date.now() - 1_000));
    await screenshots.actionStarting('types');
    timeline.see(frame('all keys but the last', Date.now() + 1));
    const stepEnd = Date.now() + 2;
    screenshots.keep('type', stepEnd, capture);
    setTimeout(() => timeline.see(frame('every key', Date.now())), 80);
    await screenshots.actionStarting('changes'); // a click
    timeline.see(frame('clicked', Date.now() + 1));
    await recording.stop();
    await screenshots.settled();
    expect(stored.get('type')).toBe('every key');
  });

  it('holds nothing after a step that only read the page: its picture is the page as it is', async () => {
    const { timeline, recording, stored, screenshots, capture } = await harness();
    timeline.see(frame('page', Date.now() - 1_000));
    screenshots.keep('read', Date.now(), capture);
    const started = performance.now();
    await screenshots.actionStarting('changes');
    expect(performance.now() - started).toBeLessThan(100);
    timeline.see(frame('typed', Date.now() + 1));
    await recording.stop();
    await screenshots.settled();
    expect(stored.get('read')).toBe('page');
  });

  it('gives up waiting for a change that repaints nothing, and keeps the page as it was', async () => {
    const { timeline, recording, stored, screenshots, capture } = await harness();
    timeline.see(frame('inert page', Date.now() - 1_000));
    await screenshots.actionStarting('changes'); // a click on an inert spot
    screenshots.keep('inert click', Date.now(), capture);
    const started = performance.now();
    await screenshots.actionStarting('changes');
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(350);
    expect(waited).toBeLessThan(2_000);
    await recording.stop();
    await screenshots.settled();
    expect(stored.get('inert click')).toBe('inert page');
  });

  it("ends a step's picture where a wait begins, and a wait holds nothing after it", async () => {
    const { timeline, recording, stored, screenshots, capture } = await harness();
    timeline.see(frame('form', Date.now() - 1_000));
    await screenshots.actionStarting('changes'); // the click
    timeline.see(frame('clicked', Date.now() + 1));
    await new Promise((resolve) => setTimeout(resolve, 5));
    screenshots.keep('click', Date.now(), capture);
    await screenshots.actionStarting('watches'); // wait for "Ready"
    await new Promise((resolve) => setTimeout(resolve, 5));
    timeline.see(frame('ready, painted by the page during the wait', Date.now()));
    screenshots.keep('wait', Date.now(), capture);
    const started = performance.now();
    await screenshots.actionStarting('changes'); // the next type
    expect(performance.now() - started).toBeLessThan(100);
    await recording.stop();
    await screenshots.settled();
    expect(stored.get('click')).toBe('clicked');
    expect(stored.get('wait')).toBe('ready, painted by the page during the wait');
  });
});
