import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/**
 * CPU time a process has used so far (user plus system, every thread, not its children) in milliseconds, read from
 * /proc. Linux only, like the benchmarks' server; the resolution is one clock tick (`getconf CLK_TCK`).
 */
export function processCpuMs(pid: number): number {
  return cpuTicks(readFileSync(`/proc/${pid}/stat`, 'utf8')) * (1000 / clockTicksPerSecond());
}

/**
 * CPU time each kind of thread of a process has used so far, in milliseconds, by thread name (Node's `MainThread`,
 * a workflow `WorkerThread`, V8's `V8Worker` helpers for garbage collection and compiling, the Temporal core's
 * `tokio-runtime-w`, …), threads of one name added up. A thread that ended since an earlier read takes its time with
 * it, so a difference of two reads can undercount a kind whose threads come and go.
 */
export function threadCpuMsByName(pid: number): Record<string, number> {
  const byName: Record<string, number> = {};
  for (const thread of readdirSync(`/proc/${pid}/task`)) {
    let line: string;
    try {
      line = readFileSync(`/proc/${pid}/task/${thread}/stat`, 'utf8');
    } catch {
      continue; // ended between the listing and the read
    }
    const name = line.slice(line.indexOf('(') + 1, line.lastIndexOf(')'));
    byName[name] = (byName[name] ?? 0) + cpuTicks(line) * (1000 / clockTicksPerSecond());
  }
  return byName;
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
  /** The variant's share by kind of thread ({@link threadCpuMsByName}). */
  variantMsByThread: Record<string, number>;
}

/** Starts counting the CPU of the server and of one variant's process; the returned function ends the span. */
export function startCpuSpan(serverPid: number, variantPid: number): () => CpuSpan {
  const server = processCpuMs(serverPid);
  const variant = processCpuMs(variantPid);
  const threads = threadCpuMsByName(variantPid);
  return () => {
    const threadsNow = threadCpuMsByName(variantPid);
    return {
      serverMs: processCpuMs(serverPid) - server,
      variantMs: processCpuMs(variantPid) - variant,
      variantMsByThread: Object.fromEntries(
        Object.entries(threadsNow).map(([name, ms]) => [name, ms - (threads[name] ?? 0)]),
      ),
    };
  };
}
