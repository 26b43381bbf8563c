import { describe, expect, it } from 'vitest';
import type { Db } from '../../../db/client';
import { BrowserLaunchError, BrowserPool, type BrowserHandle, type BrowserProvider } from '../../browser';
import { ApiError } from '../../errors';
import type { DeviceRow } from './device-resource';
import { launchBrowser, type DeviceDeps } from './transitions';

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

function provider(launch: () => Promise<BrowserHandle>): BrowserProvider {
  return { kind: 'local', start: async () => [], launch, destroyProfile: async () => undefined, shutdown: async () => undefined };
}

describe('launchBrowser', () => {
  it('turns a full pool into 503 capacity_exhausted carrying the pool’s retry hint', async () => {
    const { deps } = depsWith(provider(() => Promise.reject(new Error('never called'))), 0);
    const error = await launchBrowser(deps, row).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ apiCode: 'capacity_exhausted', status: 503, headers: { 'Retry-After': '7' } });
  });

  it('turns a browser that will not start into a 500 that shows nothing of the cause', async () => {
    const { deps, logged } = depsWith(provider(() => Promise.reject(new BrowserLaunchError('Chromium crashed at /secret/path', true))), 5);
    const error = await launchBrowser(deps, row).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ apiCode: 'internal_error', status: 500 });
    expect((error as ApiError).toBody('req_x').error.message).not.toContain('secret');
    expect(logged).toEqual(['device browser failed to start']);
  });
});
