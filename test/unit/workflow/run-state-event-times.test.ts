import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AgentRunInput } from '../../../src/shared/run-types.js';
import { RunState } from '../../../workflows/run-state.js';

const input: AgentRunInput = { tenantId: 'acme', model: 'scripted:test', prompt: 'hi' };
const start = Date.parse('2026-12-01T10:00:00.000Z');
const iso = (offsetMs: number) => new Date(start + offsetMs).toISOString();

// The workflow clock is Date inside the sandbox; here the system clock stands in for it.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(start);
});
afterEach(() => {
  vi.useRealTimers();
});

function emitOne(run: RunState): string {
  return run.emit({ type: 'tool_call_validated', toolCallId: 'c', toolName: 't', input: {}, requiresApproval: false })
    .at;
}

describe('RunState event times', () => {
  it('stamps events with the time a local activity recorded until the run waits on history, then with the clock', async () => {
    const run = new RunState('run_1', input);
    run.stampWithLocalActivity(iso(1_000));
    vi.setSystemTime(start + 3_000);
    expect([emitOne(run), emitOne(run), run.eventTime()]).toEqual([iso(1_000), iso(1_000), iso(1_000)]);
    await run.waitOnHistory(Promise.resolve());
    expect(emitOne(run)).toBe(iso(3_000));
  });

  it('drops the local activity time when history resumes the run in a handler, or when the wait fails', async () => {
    const run = new RunState('run_1', input);
    run.stampWithLocalActivity(iso(1_000));
    vi.setSystemTime(start + 2_000);
    run.resumedByHistory();
    expect(emitOne(run)).toBe(iso(2_000));
    run.stampWithLocalActivity(iso(2_500));
    await expect(run.waitOnHistory(Promise.reject(new Error('cancelled')))).rejects.toThrow('cancelled');
    vi.setSystemTime(start + 4_000);
    expect(emitOne(run)).toBe(iso(4_000));
  });

  it('never stamps an event earlier than the one before it, whatever the local activity recorded', () => {
    const run = new RunState('run_1', input);
    vi.setSystemTime(start + 5_000);
    expect(emitOne(run)).toBe(iso(5_000));
    run.stampWithLocalActivity(iso(1_000));
    expect(emitOne(run)).toBe(iso(5_000));
    expect(run.snapshot().updatedAt).toBe(iso(5_000));
  });
});
