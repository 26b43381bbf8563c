import { describe, expect, it } from 'vitest';
import { EgressUnenforceableError, remoteBrowserEgress } from './remote-browser-egress.js';

describe('remoteBrowserEgress', () => {
  it('sends local Chromium and a browserless on this machine through the egress proxy', () => {
    expect(remoteBrowserEgress({ kind: 'local', browserlessUrl: null }, false)).toEqual({ throughProxy: true, warning: null });
    for (const url of ['ws://127.0.0.1:3000/?token=t', 'ws://localhost:3000', 'ws://[::1]:3000/chromium']) {
      expect(remoteBrowserEgress({ kind: 'browserless', browserlessUrl: url }, false)).toEqual({ throughProxy: true, warning: null });
    }
  });

  it('refuses a browserless on another machine, naming the switch, unless the operator enforces egress there', () => {
    const remote = { kind: 'browserless' as const, browserlessUrl: 'ws://10.0.0.7:3000/?token=secret-token' };
    let refusal: unknown;
    try {
      remoteBrowserEgress(remote, false);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(EgressUnenforceableError);
    expect((refusal as Error).message).toContain('OPERATOR_EGRESS_ENFORCED_ELSEWHERE=true');
    expect((refusal as Error).message).not.toContain('secret-token');
    const allowed = remoteBrowserEgress(remote, true);
    expect(allowed.throughProxy).toBe(false);
    expect(allowed.warning).toMatch(/another machine.*must enforce the device egress policy/);
  });
});
