import { describe, expect, it } from 'vitest';
import { EgressUnenforceableError, planBrowserEgress } from './remote-browser-egress.js';

const none = { proxyHost: null, internalUrl: null, enforcedElsewhere: false };
const remote = { kind: 'browserless' as const, browserlessUrl: 'ws://10.0.0.7:3000/?token=secret-token' };

describe('planBrowserEgress', () => {
  it('sends local Chromium and a browserless on this machine through the proxy on loopback, asking no credential', () => {
    const onLoopback = { listenHost: '127.0.0.1', dialHost: '127.0.0.1', throughProxy: true, perDeviceCredentials: false, warning: null };
    expect(planBrowserEgress({ kind: 'local', browserlessUrl: null }, { ...none, internalUrl: 'http://10.0.0.2:3000' })).toEqual(onLoopback);
    for (const url of ['ws://127.0.0.1:3000/?token=t', 'ws://localhost:3000', 'ws://[::1]:3000/chromium']) {
      expect(planBrowserEgress({ kind: 'browserless', browserlessUrl: url }, none)).toEqual(onLoopback);
    }
  });

  it('sends a remote browserless through the proxy on the internal address, a credential per device', () => {
    const internal = { throughProxy: true, perDeviceCredentials: true, warning: null };
    expect(planBrowserEgress(remote, { ...none, internalUrl: 'http://10.0.0.2:3000' })).toEqual({ listenHost: '10.0.0.2', dialHost: '10.0.0.2', ...internal });
    expect(planBrowserEgress(remote, { ...none, internalUrl: 'http://[fd00::2]:3000' })).toEqual({ listenHost: 'fd00::2', dialHost: 'fd00::2', ...internal });
    expect(planBrowserEgress(remote, { ...none, proxyHost: '10.0.0.9' })).toEqual({ listenHost: '10.0.0.9', dialHost: '10.0.0.9', ...internal });
    // A name that reaches every instance's proxy: each listens on its own address, browsers dial the name.
    expect(planBrowserEgress(remote, { ...none, proxyHost: 'egress.internal', internalUrl: 'http://10.0.0.2:3000' })).toEqual({ listenHost: '10.0.0.2', dialHost: 'egress.internal', ...internal });
  });

  it('refuses a remote browserless with no internal address (loopback is none), naming the settings, unless the operator enforces egress there', () => {
    for (const settings of [none, { ...none, internalUrl: 'http://127.0.0.1:3000' }]) {
      let refusal: unknown;
      try {
        planBrowserEgress(remote, settings);
      } catch (error) {
        refusal = error;
      }
      expect(refusal).toBeInstanceOf(EgressUnenforceableError);
      expect((refusal as Error).message).toMatch(/OPERATOR_EGRESS_PROXY_HOST.*OPERATOR_EGRESS_ENFORCED_ELSEWHERE=true/);
      expect((refusal as Error).message).not.toContain('secret-token');
    }
    const allowed = planBrowserEgress(remote, { ...none, enforcedElsewhere: true });
    expect(allowed).toMatchObject({ throughProxy: false, perDeviceCredentials: false });
    expect(allowed.warning).toMatch(/another machine.*must enforce the device egress policy/);
  });
});
