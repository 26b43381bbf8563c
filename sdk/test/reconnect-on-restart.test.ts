import { describe, expect, it } from 'vitest';
import * as service from '../../shared/reconnect-on-restart';
import * as sdk from '../src/reconnect-on-restart';

// The SDK keeps its own copy of the reconnection policy (it is published without the
// repository); it must say what the service and the console say.
describe("the SDK's reconnection policy", () => {
  it('reconnects on the close code the gateways send, and only on it', () => {
    expect(sdk.SERVICE_RESTART_CLOSE_CODE).toBe(service.SERVICE_RESTART_CLOSE.code);
    for (const code of [1000, 1001, 1006, 1011, 1012, 4410]) expect(sdk.asksToReconnect(code)).toBe(service.asksToReconnect(code));
  });

  it('waits as long as the shared policy, attempt by attempt, and gives up at the same attempt', () => {
    expect(sdk.RECONNECT_MAX_ATTEMPTS).toBe(service.RECONNECT_MAX_ATTEMPTS);
    for (let attempt = 0; attempt <= service.RECONNECT_MAX_ATTEMPTS; attempt += 1) {
      for (const random of [0, 0.37, 0.999]) expect(sdk.reconnectDelayMs(attempt, random)).toBe(service.reconnectDelayMs(attempt, random));
    }
  });
});
