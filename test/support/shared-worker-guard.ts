import timers from 'node:timers';
import { afterAll, beforeAll } from 'vitest';

// A worker runs many test files in one process (vitest.config.ts, isolate: false): a file
// must leave the process's globals as it found them. Node's timers stay reachable through
// node:timers whatever a file does to the globals. A file that leaves them faked or spied
// would stall every timer of the files after it (a hook timing out minutes later, far from
// the cause): the next file fails at once instead, saying so.
const NODE_TIMERS = ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'clearImmediate'] as const;

function checkTimers(when: string): void {
  const replaced = NODE_TIMERS.filter((name) => globalThis[name] !== timers[name]);
  if (replaced.length > 0) throw new Error(`${replaced.join(', ')} replaced ${when} (fake timers or a spy not restored)`);
}

beforeAll(() => checkTimers('as this file starts: the file this worker ran before it left them so'));
afterAll(() => checkTimers('as this file ends'));
