import { loadavg } from 'node:os';
import { readFileSync } from 'node:fs';

/**
 * How busy the machine's CPUs are over `ms` (0 = idle, 1 = every CPU busy), from
 * /proc/stat (Linux). A benchmark on 2 cores shares them with whatever else runs: a
 * leftover browser or a test run doubles the CPU each request seems to cost, so the
 * figures say how quiet the machine was.
 */
export async function cpuBusyFraction(ms = 2_000): Promise<number> {
  const before = cpuTimes();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const after = cpuTimes();
  const total = after.total - before.total;
  return total === 0 ? 0 : 1 - (after.idle - before.idle) / total;
}

/**
 * The CPU time all processes of the machine have used since it booted, in ms (/proc/stat
 * counts in USER_HZ, a hundredth of a second on Linux). The difference over a stretch
 * is what that stretch cost the machine, whoever spent it.
 */
export function machineCpuMs(): number {
  // "cpu  user nice system idle iowait irq softirq steal guest guest_nice": a VM's steal
  // is time the host took, not this machine's work.
  const [user, nice, system, , , irq, softirq] = procStatCpu();
  return (user! + nice! + system! + irq! + softirq!) * 10;
}

function procStatCpu(): number[] {
  return readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
}

function cpuTimes(): { total: number; idle: number } {
  // "cpu  user nice system idle iowait irq softirq steal ..."
  const fields = procStatCpu();
  const idle = fields[3]! + (fields[4] ?? 0);
  return { total: fields.reduce((sum, value) => sum + value, 0), idle };
}

export interface MachineLoad {
  loadAverage1m: number;
  cpuBusy: number;
}

/**
 * The machine's load as a benchmark reports it beside its figures: the 1-minute load
 * average and how busy the CPUs were over the last `ms` (cpuBusyFraction), at one moment.
 */
export async function machineLoad(ms = 2_000): Promise<MachineLoad> {
  const cpuBusy = await cpuBusyFraction(ms);
  return { loadAverage1m: Number(loadavg()[0]!.toFixed(2)), cpuBusy: Number(cpuBusy.toFixed(2)) };
}
