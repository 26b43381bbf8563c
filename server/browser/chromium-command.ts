// The command line and environment a local Chromium starts with. puppeteer-core cannot
// start a process as another user, so as root the command is util-linux's setpriv, which
// switches to the browser's uid and group and then execs Chromium in place: the pid,
// process group and /proc/<pid>/cmdline the keeper and chromium-process.ts see are
// Chromium's own. puppeteer's default arguments are computed here, not by launch(),
// so nothing (not even its PUPPETEER_DANGEROUS_NO_SANDBOX variable) can add
// --no-sandbox behind the service's back.
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import type { BrowserUser } from './browser-users.js';
import { BROWSER_HOME } from './profile-access.js';

export const SETPRIV_PATH = '/usr/bin/setpriv';

export interface ChromiumCommand {
  executablePath: string;
  args: string[];
  env: Record<string, string>;
}

export interface ChromiumCommandOptions {
  chromiumPath: string;
  /** null: the service's own user. */
  user: BrowserUser | null;
  profileDir: string;
  headless: boolean;
  sandboxed: boolean;
  flags: readonly string[];
}

/**
 * The prefix that runs a program as `user`: no supplementary groups, and no way back to
 * more privilege through a setuid program (no_new_privs). Empty for the service's user.
 */
export function switchUserCommand(user: BrowserUser | null): string[] {
  if (user === null) return [];
  return [SETPRIV_PATH, `--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--no-new-privs', '--'];
}

/** What the device's keeper starts (keeper/keeper-process.ts); it appends --remote-debugging-pipe. */
export function chromiumCommand(options: ChromiumCommandOptions): ChromiumCommand {
  const chromiumArgs = puppeteer
    // enableExtensions: --enable-unsafe-extension-debugging instead of --disable-extensions, so
    // the service's own pipe connection may load the Stagehand extension (Extensions.loadUnpacked,
    // stagehand-extension.ts); no client ever can (cdp-rules.ts). Nothing else is installed.
    .defaultArgs({ headless: options.headless, userDataDir: options.profileDir, args: [...options.flags], enableExtensions: true })
    .filter((arg) => arg !== '--no-sandbox');
  if (!options.sandboxed) chromiumArgs.push('--no-sandbox');
  const [executablePath, ...args] = [...switchUserCommand(options.user), options.chromiumPath, ...chromiumArgs];
  return { executablePath: executablePath!, args, env: browserEnvironment(options.profileDir) };
}

/**
 * All the environment a browser gets. Nothing of the service's: its secrets (database
 * URL, model key) stay out of the browser's /proc/<pid>/environ. A PATH for Debian's
 * launcher script, and HOME and XDG folders inside the profile, the one place the
 * browser's uid may write.
 */
function browserEnvironment(profileDir: string): Record<string, string> {
  const home = path.join(profileDir, BROWSER_HOME);
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
  };
}
