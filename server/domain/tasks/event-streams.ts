import { ApiError } from '../../core/errors';
import type { KeyRevocations } from '../keys/key-revocations';
import { ConcurrencySlots } from '../rate-limit/concurrency-slots';
import type { StepReader, TaskStepFeeds } from './task-step-feeds';

// A key at its limit of open streams gets a slot back as soon as one of them ends (its task
// ends, its client leaves, or its time runs out); this is how long to wait before asking again.
const STREAM_SLOT_RETRY_AFTER_SECS = 5;

/**
 * The tasks this process follows for keys (event streams, MCP's run_task), so a shutdown
 * can end them instead of waiting on them, and how many each API key holds
 * (OPERATOR_MAX_STREAMS_PER_KEY, counted per instance).
 */
export class EventStreams {
  private readonly open = new Set<() => void>();
  private readonly perKey: ConcurrencySlots;

  constructor(maxPerKey: number) {
    this.perKey = new ConcurrencySlots(maxPerKey);
  }

  /** One of the key's stream slots, to give back when the stream ends; 429 too_many_streams when none is free. */
  claim(keyId: string): () => void {
    const release = this.perKey.claim(keyId);
    if (release === null) throw new ApiError('too_many_streams', { headers: { 'Retry-After': String(STREAM_SLOT_RETRY_AFTER_SECS) } });
    return release;
  }

  /**
   * Follows a task's steps (after `afterSeq`) for a key holding one of its slots
   * (`releaseSlot`): until the task ends (`done`, `failed`), the key is revoked or the
   * process stops (`stopped(true)`: drop the connection, the key may not resume), or the
   * returned function is called. Whatever ends it, the feed, the key watch and the slot are
   * given back once. The event stream and MCP's run_task follow tasks so.
   */
  follow(sources: { feeds: TaskStepFeeds; keyRevocations: KeyRevocations }, keyId: string, releaseSlot: () => void, taskId: string, afterSeq: number, follower: StepReader & { stopped(closeConnection: boolean): void }): () => void {
    let following = true;
    const stop = () => {
      if (!following) return false;
      following = false;
      this.open.delete(drop);
      unsubscribe();
      unwatchKey();
      releaseSlot();
      return true;
    };
    const drop = () => stop() && follower.stopped(true);
    this.open.add(drop);
    const unwatchKey = sources.keyRevocations.watch(keyId, drop);
    const unsubscribe = sources.feeds.subscribe(taskId, afterSeq, {
      steps: (steps) => follower.steps(steps),
      done: (task) => stop() && follower.done(task),
      failed: (error) => stop() && follower.failed(error),
    });
    return () => void stop();
  }

  /** Ends every stream and closes its connection, which would otherwise idle in keep-alive. */
  endAll(): void {
    for (const end of [...this.open]) end();
  }
}
