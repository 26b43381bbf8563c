// The browser layer's entry point: everything outside server/browser/ imports from here.
export * from './types.js';
export { createBrowserProvider, type BrowserProviderOptions } from './provider-factory.js';
export {
  BrowserPool,
  CapacityExhaustedError,
  DeviceOrganizationMismatchError,
  type BrowserPoolOptions,
} from './pool.js';
export { DataDirectoryFullError } from './data-directory-full.js';
export { findChromium, killOrphans } from './chromium-process.js';
export { planBrowserEgress } from './remote-browser-egress.js';
export type { DeviceState, DeviceStateStore } from './device-state.js';
export { normalizeDomainEntry } from './domain-allowlist.js';
