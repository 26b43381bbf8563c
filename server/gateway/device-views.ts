import type { BrowserPool, LiveFrame, LiveInput, LiveView } from '../browser';
import { encodeFrameMessage } from './gateway-messages';

/** A device's live view as the sockets watching it share it. */
export interface SharedView {
  input(event: LiveInput): Promise<void>;
  /**
   * Calls `listener` with each frame as the `frame` message, the same bytes for every
   * socket, and at once with the latest one; returns the unsubscribe function.
   */
  onFrame(listener: (message: Buffer) => void): () => void;
}

interface Entry {
  view: Promise<LiveView>;
  users: number;
  listeners: Set<(message: Buffer) => void>;
  latest: Buffer | null;
  /** The recorder's listeners (server/recording/), which want the frame itself. */
  frameListeners: Set<(frame: LiveFrame) => void>;
  latestFrame: LiveFrame | null;
  /** The frame `latest` encodes: frames are encoded only while a socket watches. */
  latestEncoded: LiveFrame | null;
}

/**
 * One live view per device, shared by every socket watching it: one screencast per page
 * and each frame encoded once, whatever the number of viewers. Opened on first acquire,
 * closed on the last release.
 */
export class DeviceViews {
  readonly #views = new Map<string, Entry>();

  constructor(private readonly pool: Pick<BrowserPool, 'get'>) {}

  /** The device's view; throws when the device has no browser in this process. */
  async acquire(deviceId: string): Promise<SharedView> {
    const entry = this.#views.get(deviceId) ?? this.#open(deviceId);
    entry.users += 1;
    let view: LiveView;
    try {
      view = await entry.view;
    } catch (error) {
      this.release(deviceId);
      throw error;
    }
    return {
      input: (event) => view.input(event),
      onFrame: (listener) => {
        entry.listeners.add(listener);
        if (entry.latestFrame !== null) listener(entry.latest !== null && entry.latestEncoded === entry.latestFrame ? entry.latest : encodeFrameMessage(entry.latestFrame));
        return () => entry.listeners.delete(listener);
      },
    };
  }

  /**
   * Calls `listener` with every frame of the device's page (and at once with the latest),
   * on the same screencast the viewers share; returns the function that stops it. Throws
   * like acquire() when the device has no browser in this process.
   */
  async watchFrames(deviceId: string, listener: (frame: LiveFrame) => void): Promise<() => void> {
    await this.acquire(deviceId);
    const entry = this.#views.get(deviceId)!;
    entry.frameListeners.add(listener);
    if (entry.latestFrame !== null) listener(entry.latestFrame);
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      entry.frameListeners.delete(listener);
      this.release(deviceId);
    };
  }

  release(deviceId: string): void {
    const entry = this.#views.get(deviceId);
    if (entry === undefined) return;
    entry.users -= 1;
    if (entry.users > 0) return;
    this.#views.delete(deviceId);
    entry.listeners.clear();
    entry.frameListeners.clear();
    void entry.view.then((view) => view.close()).catch(() => undefined);
  }

  #open(deviceId: string): Entry {
    const browser = this.pool.get(deviceId);
    if (browser === undefined) throw new Error('the device has no browser on this host');
    const entry: Entry = { view: browser.liveView(), users: 0, listeners: new Set(), latest: null, frameListeners: new Set(), latestFrame: null, latestEncoded: null };
    this.#views.set(deviceId, entry);
    void entry.view.then(
      (view) =>
        view.onFrame((frame) => {
          entry.latestFrame = frame;
          for (const listener of entry.frameListeners) {
            try {
              listener(frame);
            } catch {
              // A failing recorder must not starve the viewers.
            }
          }
          // Encoded only for sockets: a recording alone needs no JSON of its frames.
          if (entry.listeners.size > 0) {
            entry.latestEncoded = frame;
            publish(entry, encodeFrameMessage(frame));
          }
        }),
      // acquire() reports the failure to its caller.
      () => undefined,
    );
    return entry;
  }
}

function publish(entry: Entry, message: Buffer): void {
  entry.latest = message;
  for (const listener of entry.listeners) {
    try {
      listener(message);
    } catch {
      // One failing socket must not starve the device's other viewers.
    }
  }
}
