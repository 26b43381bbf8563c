// Receiver-side verification lives in the SDK (sdk/src/verify-webhook.ts), which customers
// install; the service's own tests and the root package's `./verify-webhook` export use
// that one copy.
export * from '../../../sdk/src/verify-webhook';
