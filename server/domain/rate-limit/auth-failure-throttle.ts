import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError } from '../../core/errors';
import type { LimiterStore } from './limiter-store';

export interface AuthFailureSettings {
  /** Failures an address may make in one window. */
  limit: number;
  windowSecs: number;
}

// IPv6 clients are counted by their /64: one host usually holds a whole /64, and counting
// single addresses would let it rotate through 2^64 of them.
const IPV6_PREFIX_BITS = 64;

/**
 * Throttles failed authentication per client address, on every entrance that takes a
 * bearer (API keys, escalation bearers, session tokens, console keys). An address that
 * failed `limit` times in a window is answered 429 `rate_limited` with `Retry-After` on
 * every such entrance until the window ends, before its credential is looked at: the
 * answer is the same whether the credential would have been right or wrong, so a blocked
 * guesser learns nothing. Successes are not counted; an address is only ever refused
 * because failures came from it. Counters live in the service's limiter store.
 */
export class AuthFailureThrottle {
  private constructor(
    private readonly failures: RateLimiterAbstract,
    private readonly limit: number,
    /** Where a request comes from (http/client-address.ts: its client behind trusted proxies). */
    private readonly addressOf: (req: IncomingMessage) => string,
  ) {}

  static create(settings: AuthFailureSettings, addressOf: (req: IncomingMessage) => string, store: LimiterStore): AuthFailureThrottle {
    const failures = store.limiter({ points: settings.limit, duration: settings.windowSecs, keyPrefix: 'auth_failure' });
    return new AuthFailureThrottle(failures, settings.limit, addressOf);
  }

  /**
   * Runs a bearer check under the throttle: refused while the address is blocked, and a
   * 401 it throws counted against the address.
   */
  async check<T>(req: IncomingMessage, authenticate: () => Promise<T>): Promise<T> {
    await this.refuseIfBlocked(req);
    try {
      return await authenticate();
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) await this.recordFailure(req);
      throw error;
    }
  }

  /** Throws 429 rate_limited while the request's address has used up its failures. */
  async refuseIfBlocked(req: IncomingMessage): Promise<void> {
    const state = await this.failures.get(this.keyOf(req));
    // The memory store drops a passed window on a timer, which may run late: a window
    // whose end is behind us blocks nothing.
    if (state === null || state.consumedPoints < this.limit || state.msBeforeNext <= 0) return;
    throw new ApiError('rate_limited', {
      message: 'Too many failed authentications from this address; retry after the time given in Retry-After.',
      headers: { 'Retry-After': String(Math.max(1, Math.ceil(state.msBeforeNext / 1000))) },
    });
  }

  /** Counts one failed authentication against the request's address. */
  async recordFailure(req: IncomingMessage): Promise<void> {
    await this.failures.penalty(this.keyOf(req));
  }

  private keyOf(req: IncomingMessage): string {
    const address = this.addressOf(req);
    if (!address.includes(':') || !ipaddr.IPv6.isValid(address)) return address;
    return `${ipaddr.IPv6.networkAddressFromCIDR(`${address}/${IPV6_PREFIX_BITS}`).toNormalizedString()}/${IPV6_PREFIX_BITS}`;
  }
}
