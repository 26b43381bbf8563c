export * from './client.js';
export * from './errors.js';
export { LiveView, type LiveFrame, type LiveInput, type LiveReady, type LiveReconnect, type LiveRefusal, type ConnectableSession, type WebSocketConstructor } from './live-view.js';
export { PagePromise, type Page } from './pagination.js';
export type { RetryOptions } from './retry.js';
export * from './verify-webhook.js';
export type { components, paths, webhooks } from './generated/schema.js';
