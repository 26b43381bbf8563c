import { describe, expect, it } from 'vitest';
import type { Db } from '../../../db/client';
import { FakeBrowserProvider } from '../../../test/support/fake-browser-provider';
import { BrowserLaunchError, BrowserPool, type BrowserProvider } from '../../browser';
import { ApiError } from '../../core/errors';
import type { DeviceRow } from './device-resource';
import { launchBrowser, type DeviceDeps } from './device-transitions';

const row = { id: '3f1c9b8e-2d4a-4c6b-9e7f-1a2b3c4d5e6f', orgId: 'a0b1c2d3-e4f5-4a6b-8c7d-9e0f1a2b3c4d' } as DeviceRow;

function depsWith(provider: BrowserProvider, maxBrowsers: number) {
  const logged: string[] = [];
  const deps: DeviceDeps = {
    db: {} as Db,
    browserPool: new BrowserPool(provider, { maxBrowsers, retryAfterSeconds: 7 }),
    hostId: 'host_test',
    config: { regions: ['local'] },
    log: { warn: (_obj, msg) => logged.push(msg), error: (_obj, msg) => logged.push(msg) },
  };
  return { deps, logged };
}

describe('launchBrowser', () => {
  it('starts the device’s browser for the device’s organization', async () => {
    const provider = new FakeBrowserProvider();
    const { deps } = depsWith(provider, 5);
    await launchBrowser(deps, row);
    expect(provider.calls).toEqual([{ method: 'launch', args: [{ deviceId: row.id, orgId: row.orgId }] }]);
  });

  it('turns a full pool into 503 capacity_exhausted carrying the pool’s retry hint, launching nothing', async () => {
    const provider = new FakeBrowserProvider();
    const { deps } = depsWith(provider, 0);
    const error = await launchBrowser(deps, row).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ apiCode: 'capacity_exhausted', status: 503, headers: { 'Retry-After': '7' } });
    expect(provider.calls).toEqual([]);
  });

  it('turns a browser that will not start into a 500 that shows nothing of the cause', async () => {
    const provider = new FakeBrowserProvider();
    provider.failLaunches(new BrowserLaunchError('Chromium crashed at /secret/path', true));
    const { deps, logged } = depsWith(provider, 5);
    const error = await launchBrowser(deps, row).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ apiCode: 'internal_error', status: 500 });
    expect((error as ApiError).toBody('req_x').error.message).not.toContain('secret');
    expect(logged).toEqual(['device browser failed to start']);
  });
});
