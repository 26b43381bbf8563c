import type { DeviceState, DeviceStateStore } from '../../server/browser/device-state.js';

/** The device-state store the composition root backs with PostgreSQL, in memory. */
export class MemoryStateStore implements DeviceStateStore {
  readonly states = new Map<string, unknown>();
  async load(deviceId: string): Promise<unknown> {
    return this.states.get(deviceId) ?? null;
  }
  async save(deviceId: string, state: DeviceState): Promise<void> {
    this.states.set(deviceId, structuredClone(state));
  }
  async remove(deviceId: string): Promise<void> {
    this.states.delete(deviceId);
  }
  async deviceIds(): Promise<string[]> {
    return [...this.states.keys()];
  }
}
