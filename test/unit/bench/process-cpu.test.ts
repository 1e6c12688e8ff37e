import { describe, expect, it } from 'vitest';
import { cpuTicks, processCpuMs, threadCpuMsByName } from '../../../bench/lib/process-cpu.js';

describe('process CPU', () => {
  it('adds utime and stime, counting fields from after a command name that holds spaces and parentheses', () => {
    const line = '4242 (temporal (dev) x) S 1 4242 4242 0 -1 4194560 9000 0 0 0 1234 567 0 0 20 0 12 0 100 0 0';

    expect(cpuTicks(line)).toBe(1234 + 567);
  });

  it('refuses a line that is not a stat line instead of counting nothing', () => {
    expect(() => cpuTicks('not a stat line')).toThrow(/Not a \/proc stat line/);
  });

  it("reads this process's own CPU, which grows while it works", () => {
    const before = processCpuMs(process.pid);
    const until = performance.now() + 60;
    while (performance.now() < until) Math.sqrt(Math.random());

    expect(processCpuMs(process.pid)).toBeGreaterThan(before);
  });

  it("splits the CPU by thread name, and the busy thread's share grows while it works", () => {
    const before = threadCpuMsByName(process.pid);
    const until = performance.now() + 60;
    while (performance.now() < until) Math.sqrt(Math.random());
    const after = threadCpuMsByName(process.pid);

    const busiest = Object.entries(after).sort(([, a], [, b]) => b - a)[0]?.[0] ?? '';
    expect(after[busiest]).toBeGreaterThan(before[busiest] ?? 0);
    expect(Object.values(after).reduce((sum, ms) => sum + ms, 0)).toBeLessThanOrEqual(processCpuMs(process.pid) + 10);
  });
});
