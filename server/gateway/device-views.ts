import type { BrowserHandle, BrowserPool, LiveFrame, LiveInput, LiveView, ScreencastAudience } from '../browser';
import type { FrameWatch } from '../artifacts/recorder';
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
  /** The users that are sockets (people watching), not recorders: they want full-size frames. */
  people: number;
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
 * closed on the last release. Its frames are sized for whoever watches: full size while a
 * socket does, smaller for a recorder alone (live-view.ts).
 */
export class DeviceViews {
  readonly #views = new Map<string, Entry>();

  constructor(private readonly pool: Pick<BrowserPool, 'get'>) {}

  /** The device's view, for a socket; throws when the device has no browser in this process. */
  async acquire(deviceId: string): Promise<SharedView> {
    const entry = await this.#acquire(deviceId, 'people');
    return {
      // The entry's view of the moment: it is replaced when the device's page is (#follow).
      input: async (event) => (await entry.view).input(event),
      onFrame: (listener) => {
        entry.listeners.add(listener);
        if (entry.latestFrame !== null) listener(entry.latest !== null && entry.latestEncoded === entry.latestFrame ? entry.latest : encodeFrameMessage(entry.latestFrame));
        return () => entry.listeners.delete(listener);
      },
    };
  }

  /**
   * Calls `listener` with every frame of the device's page (and at once with the latest),
   * on the same screencast the viewers share, until the watch returned stops. Throws
   * like acquire() when the device has no browser in this process.
   */
  async watchFrames(deviceId: string, listener: (frame: LiveFrame) => void): Promise<FrameWatch> {
    const entry = await this.#acquire(deviceId, 'recording');
    entry.frameListeners.add(listener);
    if (entry.latestFrame !== null) listener(entry.latestFrame);
    let stopped = false;
    return {
      stop: () => {
        if (stopped) return;
        stopped = true;
        entry.frameListeners.delete(listener);
        this.#release(deviceId, 'recording');
      },
      // The entry's view of the moment: it is replaced when the device's page is (#follow).
      repaint: async () => (await entry.view).repaint(),
    };
  }

  /** A socket stops watching the device. */
  release(deviceId: string): void {
    this.#release(deviceId, 'people');
  }

  /** The entry once its view is open, counted as used by `user`; throws like acquire(). */
  async #acquire(deviceId: string, user: ScreencastAudience): Promise<Entry> {
    const entry = this.#views.get(deviceId) ?? this.#open(deviceId, user);
    entry.users += 1;
    if (user === 'people') entry.people += 1;
    try {
      const view = await entry.view;
      if (user === 'people' && entry.people === 1) await view.setAudience('people');
    } catch (error) {
      this.#release(deviceId, user);
      throw error;
    }
    return entry;
  }

  #release(deviceId: string, user: ScreencastAudience): void {
    const entry = this.#views.get(deviceId);
    if (entry === undefined) return;
    entry.users -= 1;
    if (user === 'people') {
      entry.people -= 1;
      // The last person left; a recorder still watching gets its smaller frames again.
      if (entry.people === 0 && entry.users > 0) void entry.view.then((view) => view.setAudience('recording')).catch(() => undefined);
    }
    if (entry.users > 0) return;
    this.#views.delete(deviceId);
    entry.listeners.clear();
    entry.frameListeners.clear();
    void entry.view.then((view) => view.close()).catch(() => undefined);
  }

  #open(deviceId: string, firstUser: ScreencastAudience): Entry {
    const browser = this.pool.get(deviceId);
    if (browser === undefined) throw new Error('the device has no browser on this host');
    const entry: Entry = { view: browser.liveView(firstUser), users: 0, people: 0, listeners: new Set(), latest: null, frameListeners: new Set(), latestFrame: null, latestEncoded: null };
    this.#views.set(deviceId, entry);
    this.#follow(deviceId, entry, browser);
    return entry;
  }

  /**
   * Hands the frames of the entry's view to its sockets and recorders, and when the page it
   * shows is gone (the renderer crashed, the site closed it) opens a view of the device's
   * next page for them: the same sockets and recorders then see the page that replaced it.
   */
  #follow(deviceId: string, entry: Entry, browser: BrowserHandle): void {
    void entry.view.then(
      (view) => {
        view.onEnded(() => {
          if (this.#views.get(deviceId) !== entry) return;
          entry.view = browser.liveView(entry.people > 0 ? 'people' : 'recording');
          this.#follow(deviceId, entry, browser);
        });
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
        });
      },
      // acquire() reports the failure to its caller; an input, to its socket.
      () => undefined,
    );
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
