import { readdirSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { PROC_READS_AT_ONCE, processesOfUser, processGroupMembers, readProcFile } from './processes.js';

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

it('reads a /proc file whole, in one read or in several, and an ended process\'s as null', async () => {
  // A stat line fits the kept buffer; this process's memory map (hundreds of lines) does not.
  const stat = await readProcFile('/proc/self/stat');
  expect(stat?.split(' ')[0]).toBe(String(process.pid));
  const maps = readFileSync('/proc/self/maps', 'utf8');
  expect(maps.length).toBeGreaterThan(8_192);
  const read = await readProcFile('/proc/self/maps');
  // The map may change between the two reads (a thread's stack); its first lines do not.
  expect(read!.split('\n').length).toBeGreaterThan(100);
  expect(read!.split('\n').slice(0, 50)).toEqual(maps.split('\n').slice(0, 50));
  const ended = spawnSync('true').pid;
  expect(await readProcFile(`/proc/${ended}/stat`)).toBeNull();
});

it('finds the processes of a uid', async () => {
  expect(await processesOfUser(process.getuid!())).toContain(process.pid);
});
