import { describe, expect, it } from 'vitest';
import { EncodeQueue } from './encode-queue';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('EncodeQueue', () => {
  it('runs encodings in the order they came, no more at once than its concurrency', async () => {
    const queue = new EncodeQueue(2);
    const started: number[] = [];
    let running = 0;
    let most = 0;
    for (let index = 0; index < 6; index += 1) {
      queue.add(async () => {
        started.push(index);
        running += 1;
        most = Math.max(most, running);
        await sleep(20);
        running -= 1;
      });
    }
    expect(queue.size).toBe(6);
    await expect.poll(() => queue.size).toBe(0);
    expect(started).toEqual([0, 1, 2, 3, 4, 5]);
    expect(most).toBe(2);
  });

  it('goes on after an encoding that failed', async () => {
    const queue = new EncodeQueue(1);
    let ran = false;
    queue.add(async () => {
      throw new Error('ffmpeg is gone');
    });
    queue.add(async () => {
      ran = true;
    });
    await expect.poll(() => ran).toBe(true);
  });

  it('starts an encoding no sooner than its delay after it came, and the next one once a place is free and its delay passed', async () => {
    const queue = new EncodeQueue(1, 100);
    const startedAfter: number[] = [];
    const addedAt = Date.now();
    for (let index = 0; index < 2; index += 1) {
      queue.add(async () => {
        startedAfter.push(Date.now() - addedAt);
        await sleep(150);
      });
    }
    await expect.poll(() => queue.size, { timeout: 2_000 }).toBe(0);
    // A timer may fire a millisecond early by Date's clock.
    expect(startedAfter[0]).toBeGreaterThanOrEqual(99);
    expect(startedAfter[0]).toBeLessThan(240);
    // The second came with the first: its delay passed while the first ran, so it starts as that ends.
    expect(startedAfter[1]! - startedAfter[0]!).toBeGreaterThanOrEqual(149);
    expect(startedAfter[1]! - startedAfter[0]!).toBeLessThan(240);
  });

  it('starts what waits at once when it stops, without its delay', async () => {
    const queue = new EncodeQueue(1, 60_000);
    let ran = false;
    queue.add(async () => {
      ran = true;
    });
    await sleep(20);
    expect(ran).toBe(false);
    const startedAt = Date.now();
    await queue.stop(5_000);
    expect(ran).toBe(true);
    expect(Date.now() - startedAt).toBeLessThan(1_000);
  });

  it('lets a stop wait for what is waiting, up to its time, then aborts the running encoding and drops the rest', async () => {
    const queue = new EncodeQueue(1);
    const finished: string[] = [];
    let aborted = false;
    queue.add(async () => {
      await sleep(30);
      finished.push('short');
    });
    queue.add(async (stopping) => {
      await new Promise<void>((resolve) => stopping.addEventListener('abort', () => resolve()));
      aborted = true;
    });
    queue.add(async () => {
      finished.push('never');
    });
    const startedAt = Date.now();
    await queue.stop(300);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(290);
    expect(finished).toEqual(['short']);
    expect(aborted).toBe(true);
    // A stopped queue takes nothing more.
    queue.add(async () => {
      finished.push('after the stop');
    });
    await sleep(20);
    expect(finished).toEqual(['short']);
    expect(queue.size).toBe(0);
  });
});
