import { describe, expect, it } from 'vitest';
import type { BrowserHandle, LiveFrame, LiveView, ScreencastAudience } from '../browser';
import { DeviceViews } from './device-views';

/**
 * A device's browser whose live views are recording fakes: how often one was opened, its
 * frames pushed by hand to the latest one, and the end of the page it shows.
 */
function fakeDevice() {
  let shown = { frames: new Set<(frame: LiveFrame) => void>(), ended: new Set<() => void>() };
  const device = {
    viewsOpened: 0,
    viewsClosed: 0,
    /** The audience each view was opened for, then each one it was set to. */
    audiences: [] as ScreencastAudience[],
    /** For each repaint asked, the number of the view (in opening order) it was asked of. */
    repaintsOfView: [] as number[],
    emit: (frame: LiveFrame) => shown.frames.forEach((listener) => listener(frame)),
    /** The page the latest view shows goes (its renderer crashed, or the site closed it). */
    endPage: () => shown.ended.forEach((listener) => listener()),
  };
  const handle = {
    liveView: async (audience: ScreencastAudience) => {
      device.viewsOpened += 1;
      device.audiences.push(audience);
      const own = { frames: new Set<(frame: LiveFrame) => void>(), ended: new Set<() => void>() };
      shown = own;
      const view: LiveView = {
        onFrame(listener) {
          own.frames.add(listener);
          return () => own.frames.delete(listener);
        },
        input: async () => undefined,
        setAudience: async (audience) => {
          if (device.audiences.at(-1) !== audience) device.audiences.push(audience);
        },
        onEnded: (listener) => own.ended.add(listener),
        repaint: async () => {
          device.repaintsOfView.push(device.viewsOpened);
        },
        close: async () => {
          device.viewsClosed += 1;
        },
      };
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

  it('sizes the screencast for a recorder alone, for people while a socket watches, and for the recorder again when the last socket leaves', async () => {
    const { device, pool } = fakeDevice();
    const views = new DeviceViews(pool);
    const recorded: LiveFrame[] = [];
    const stopRecording = await views.watchFrames('device-1', (frame) => recorded.push(frame));
    expect(device.audiences).toEqual(['recording']);
    await views.acquire('device-1');
    await views.acquire('device-1');
    expect(device.audiences).toEqual(['recording', 'people']);
    views.release('device-1');
    await new Promise((resolve) => setImmediate(resolve));
    expect(device.audiences).toEqual(['recording', 'people']);
    views.release('device-1');
    await new Promise((resolve) => setImmediate(resolve));
    expect(device.audiences).toEqual(['recording', 'people', 'recording']);
    device.emit({ data: '/9j/AAAA', width: 1280, height: 720, swappedAt: 0 });
    expect(recorded).toHaveLength(1);
    stopRecording.stop();
    await new Promise((resolve) => setImmediate(resolve));
    expect(device.viewsClosed).toBe(1);

    // Opened by a socket, it is full size from the start.
    await views.acquire('device-1');
    expect(device.audiences.at(-1)).toBe('people');
  });

  it("shows the device's next page to the same sockets and recorders when the one shown is gone (crashed, closed)", async () => {
    const { device, pool } = fakeDevice();
    const views = new DeviceViews(pool);
    const recorded: LiveFrame[] = [];
    const stopRecording = await views.watchFrames('device-1', (frame) => recorded.push(frame));
    const viewer = await views.acquire('device-1');
    const received: Buffer[] = [];
    viewer.onFrame((message) => received.push(message));
    device.endPage();
    await new Promise((resolve) => setImmediate(resolve));
    expect(device.viewsOpened).toBe(2);
    // A socket watches: the new view is full size.
    expect(device.audiences.at(-1)).toBe('people');
    device.emit({ data: '/9j/BBBB', width: 800, height: 600, swappedAt: 1 });
    expect(recorded.at(-1)?.data).toBe('/9j/BBBB');
    expect(JSON.parse(received.at(-1)!.toString()).data).toBe('/9j/BBBB');
    // A recorder asking for a frame asks the page shown now, not the one that went.
    await stopRecording.repaint();
    expect(device.repaintsOfView).toEqual([2]);

    views.release('device-1');
    stopRecording.stop();
    await new Promise((resolve) => setImmediate(resolve));
    expect(device.viewsClosed).toBe(1);
    // Released before its page went: not opened again.
    device.endPage();
    await new Promise((resolve) => setImmediate(resolve));
    expect(device.viewsOpened).toBe(2);
  });

  it('refuses a device with no browser in this process', async () => {
    const { pool } = fakeDevice();
    await expect(new DeviceViews(pool).acquire('device-2')).rejects.toThrow(/no browser/);
  });
});
