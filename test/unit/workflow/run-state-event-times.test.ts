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

function emitOne(run: RunState, at?: string): string {
  const init = {
    type: 'tool_call_validated',
    toolCallId: 'c',
    toolName: 't',
    input: {},
    requiresApproval: false,
  } as const;
  return run.emit(init, { at }).at;
}

describe('RunState event times', () => {
  it('stamps an event with the recorded time it is given, not the clock', () => {
    const run = new RunState('run_1', input);
    vi.setSystemTime(start + 3_000);
    expect([emitOne(run, iso(1_000)), emitOne(run, iso(2_000))]).toEqual([iso(1_000), iso(2_000)]);
    expect(run.latestAt).toBe(iso(2_000));
  });

  it('takes the clock only for a result recorded without a time (runs from before results carried one)', () => {
    const run = new RunState('run_1', input);
    vi.setSystemTime(start + 4_000);
    expect(emitOne(run)).toBe(iso(4_000));
  });

  it('never stamps an event earlier than the one before it, whatever time it is given', () => {
    const run = new RunState('run_1', input);
    expect(emitOne(run, iso(5_000))).toBe(iso(5_000));
    expect(emitOne(run, iso(1_000))).toBe(iso(5_000));
    expect(run.snapshot().updatedAt).toBe(iso(5_000));
  });
});
