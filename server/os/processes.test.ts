import { readdirSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { PROC_READS_AT_ONCE, processGroupMembers } from './processes.js';

it('keeps a bounded number of /proc files open, however many scans of the processes run at once', async () => {
  // A service stopping retires every browser at once, and each scans every process while
  // it waits for its group to go: 64 devices held 17,000 files open and ran out (EMFILE).
  const openFiles = () => readdirSync('/proc/self/fd').length;
  const before = openFiles();
  let most = before;
  let sampling = true;
  const sample = () => {
    most = Math.max(most, openFiles());
    if (sampling) setImmediate(sample);
  };
  sample();
  // No process leads this group (above the kernel's largest pid): every scan reads every process.
  const scans = await Promise.all(Array.from({ length: 50 }, () => processGroupMembers(2 ** 22 + 1)));
  sampling = false;
  expect(scans.every((members) => members.length === 0)).toBe(true);
  expect(most - before).toBeLessThanOrEqual(PROC_READS_AT_ONCE + 8);
});

it('finds the members of a process group', async () => {
  // This test's own group: after the command name come the state, the parent and the group.
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const group = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  expect(await processGroupMembers(group)).toContain(process.pid);
});
