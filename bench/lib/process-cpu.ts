import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/**
 * CPU time a process has used so far (user plus system, every thread, not its children) in milliseconds, read from
 * /proc. Linux only, like the benchmarks' server; the resolution is one clock tick (`getconf CLK_TCK`).
 */
export function processCpuMs(pid: number): number {
  return cpuTicks(readFileSync(`/proc/${pid}/stat`, 'utf8')) * (1000 / clockTicksPerSecond());
}

/**
 * utime plus stime of a /proc/PID/stat line. The command name (field 2) sits in parentheses and may hold spaces, so
 * the fields are counted from after its closing one: field 3 (state) comes first, so utime (14) and stime (15) are the
 * 12th and 13th.
 */
export function cpuTicks(statLine: string): number {
  const fields = statLine.slice(statLine.lastIndexOf(')') + 2).split(' ');
  const user = Number(fields[11]);
  const system = Number(fields[12]);
  if (!Number.isFinite(user) || !Number.isFinite(system)) throw new Error(`Not a /proc stat line: ${statLine}`);
  return user + system;
}

function clockTicksPerSecond(): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  return ticksPerSecond;
}

/** The CPU two processes used between a {@link startCpuSpan} and its end, in milliseconds each. */
export interface CpuSpan {
  serverMs: number;
  variantMs: number;
}

/** Starts counting the CPU of the server and of one variant's process; the returned function ends the span. */
export function startCpuSpan(serverPid: number, variantPid: number): () => CpuSpan {
  const server = processCpuMs(serverPid);
  const variant = processCpuMs(variantPid);
  return () => ({ serverMs: processCpuMs(serverPid) - server, variantMs: processCpuMs(variantPid) - variant });
}
