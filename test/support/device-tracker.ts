import { expect } from 'vitest';
import type { ApiCall } from './http';

/**
 * Devices a test file creates, deleted after each test: every device holds a Chromium,
 * and the pool's capacity is shared by the file's tests.
 */
export class DeviceTracker {
  readonly #created: string[] = [];

  constructor(private readonly api: () => ApiCall) {}

  /** Creates an active device in the Space; returns its public id. */
  async create(spaceId: string): Promise<string> {
    const device = await this.api()('POST', '/v1/devices', { space_id: spaceId });
    expect(device.status).toBe(201);
    this.#created.push(device.body.id);
    return device.body.id;
  }

  async deleteAll(): Promise<void> {
    for (const device of this.#created.splice(0)) await this.api()('DELETE', `/v1/devices/${device}`);
  }
}
