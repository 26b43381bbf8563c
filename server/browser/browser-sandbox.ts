// Whether local Chromium runs inside its own sandbox. Debian's Chromium has no setuid
// helper: its sandbox needs the kernel to let an unprivileged user create user, PID and
// network namespaces. Checked once, when the service starts, under the identity the
// browsers will have; without it the service refuses to start unless an operator
// explicitly accepts unsandboxed browsers for local use.
import { spawn } from 'node:child_process';
import type { BrowserUser } from './browser-users.js';
import { switchUserCommand } from './chromium-command.js';
import { BrowserLaunchError } from './types.js';

export interface SandboxDecision {
  /** Chromium runs with its sandbox; false only when an operator allowed otherwise. */
  sandboxed: boolean;
  /** One line for the log when the browsers run unsandboxed. */
  warning: string | null;
}

/**
 * True when `user` (null: the service's own user) can create the namespaces Chromium's
 * sandbox is built on. A cheap stand-in for starting Chromium itself; it may only err
 * on the side of refusing (a Chromium with a setuid sandbox helper needs no namespaces).
 */
export function kernelOffersSandbox(user: BrowserUser | null): Promise<boolean> {
  const [command, ...args] = [...switchUserCommand(user), 'unshare', '--user', '--pid', '--net', '--fork', 'true'];
  return new Promise((resolve) => {
    const child = spawn(command!, args, { stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('exit', (code) => resolve(code === 0));
  });
}

/** Sandbox on when the kernel offers one; otherwise refuse, unless `allowUnsandboxed`. */
export function decideSandbox(sandboxAvailable: boolean, allowUnsandboxed: boolean): SandboxDecision {
  if (sandboxAvailable) return { sandboxed: true, warning: null };
  if (!allowUnsandboxed) {
    throw new BrowserLaunchError(
      'Chromium cannot run sandboxed here: the kernel does not let unprivileged users create user namespaces ' +
        '(enable them, e.g. sysctl kernel.unprivileged_userns_clone=1), or set OPERATOR_ALLOW_UNSANDBOXED_BROWSER=true for local use only',
      false,
    );
  }
  return {
    sandboxed: false,
    warning:
      'Chromium runs WITHOUT its sandbox (OPERATOR_ALLOW_UNSANDBOXED_BROWSER=true): a page that exploits the browser gets its user\'s rights; for local use only',
  };
}
