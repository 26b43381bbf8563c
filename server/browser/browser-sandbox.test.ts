import { describe, expect, it } from 'vitest';
import { decideSandbox } from './browser-sandbox.js';
import { BrowserLaunchError } from './types.js';

describe('the sandbox decision', () => {
  it('runs Chromium sandboxed whenever the kernel offers a sandbox, switch or not', () => {
    expect(decideSandbox(true, false)).toEqual({ sandboxed: true, warning: null });
    expect(decideSandbox(true, true)).toEqual({ sandboxed: true, warning: null });
  });

  it('refuses to start, in one line naming the switch, when there is no sandbox and the switch is off', () => {
    const refusal = (() => {
      try {
        decideSandbox(false, false);
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(BrowserLaunchError);
    expect((refusal as BrowserLaunchError).retryable).toBe(false);
    expect((refusal as BrowserLaunchError).message).toMatch(/cannot run sandboxed/);
    expect((refusal as BrowserLaunchError).message).toContain('OPERATOR_ALLOW_UNSANDBOXED_BROWSER=true');
    expect((refusal as BrowserLaunchError).message).not.toContain('\n');
  });

  it('runs unsandboxed only when the switch allows it, with a warning line for the log', () => {
    const decision = decideSandbox(false, true);
    expect(decision.sandboxed).toBe(false);
    expect(decision.warning).toMatch(/WITHOUT its sandbox.*OPERATOR_ALLOW_UNSANDBOXED_BROWSER=true.*local use only/);
  });
});
