import { describe, expect, it } from 'vitest';
import type { BrowserHandle, LiveFrame, LiveView } from '../browser';
import { DeviceViews } from './device-views';

/** A device's browser whose live view is a recording fake: how often it was opened, and its frames pushed by hand. */
function fakeDevice() {
  const listeners = new Set<(frame: LiveFrame) => void>();
  const device = { viewsOpened: 0, viewsClosed: 0, emit: (frame: LiveFrame) => listeners.forEach((listener) => listener(frame)) };
  const view: LiveView = {
    onFrame(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    input: async () => undefined,
    close: async () => {
      device.viewsClosed += 1;
    },
  };
  const handle = {
    liveView: async () => {
      device.viewsOpened += 1;
      return view;
    },
  } as unknown as BrowserHandle;
  return { device, pool: { get: (deviceId: string) => (deviceId === 'device-1' ? handle : undefined) } };
}

describe('DeviceViews', () => {
  it('opens one screencast for every viewer of a device, encodes each frame once for all of them, and closes it with the last', async () => {
    const { device, pool } = fakeDevice();
    const views = new DeviceViews(pool);
    const viewers = await Promise.all([views.acquire('device-1'), views.acquire('device-1'), views.acquire('device-1')]);
    expect(device.viewsOpened).toBe(1);

    const received: Buffer[][] = viewers.map(() => []);
    viewers.forEach((viewer, index) => viewer.onFrame((message) => received[index]!.push(message)));
    device.emit({ data: '/9j/AAAA', width: 1280, height: 720, swappedAt: 0 });
    expect(received.map((messages) => messages.length)).toEqual([1, 1, 1]);
    // The very same bytes for every socket: the frame was encoded once.
    expect(received[1]![0]).toBe(received[0]![0]);
    expect(received[2]![0]).toBe(received[0]![0]);
    expect(JSON.parse(received[0]![0]!.toString())).toEqual({ type: 'frame', format: 'jpeg', data: '/9j/AAAA', width: 1280, height: 720 });

    // A late viewer gets the latest frame at once, the same bytes again.
    const late: Buffer[] = [];
    (await views.acquire('device-1')).onFrame((message) => late.push(message));
    expect(late[0]).toBe(received[0]![0]);
    expect(device.viewsOpened).toBe(1);

    for (let index = 0; index < 4; index += 1) views.release('device-1');
    await new Promise((resolve) => setImmediate(resolve));
    expect(device.viewsClosed).toBe(1);
  });

  it('refuses a device with no browser in this process', async () => {
    const { pool } = fakeDevice();
    await expect(new DeviceViews(pool).acquire('device-2')).rejects.toThrow(/no browser/);
  });
});
