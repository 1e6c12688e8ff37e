import { describe, expect, it } from 'vitest';
import { callWaitState } from '../../../src/client/call-wait-state.js';
import type { RunEvent } from '../../../src/shared/run-types.js';

const at = '2026-12-04T12:00:00.000Z';
const ids = { toolCallId: 'call_1_0', toolName: 'transfer_funds', at, step: 1 };
const validated: RunEvent = { ...ids, seq: 1, type: 'tool_call_validated', input: {}, requiresApproval: true };
const awaiting: RunEvent = { ...ids, seq: 2, type: 'tool_awaiting_approval', input: {}, expiresAt: at };

describe('where a call stands in its wait for a human', () => {
  it('is on its way while its input is checked, waiting once asked, and not waiting once decided or never asked', () => {
    expect(callWaitState([validated], 'call_1_0')).toBe('on_its_way');
    expect(callWaitState([validated, awaiting], 'call_1_0')).toBe('waiting');
    const approved: RunEvent = { ...ids, seq: 3, type: 'tool_approved', input: {}, edited: false };
    expect(callWaitState([validated, awaiting, approved], 'call_1_0')).toBe('not_waiting');
    const noHuman: RunEvent = { ...ids, seq: 2, type: 'tool_approval_not_required' };
    expect(callWaitState([validated, noHuman], 'call_1_0')).toBe('not_waiting');
    expect(callWaitState([{ ...validated, requiresApproval: false }], 'call_1_0')).toBe('not_waiting');
    expect(callWaitState([validated, awaiting], 'call_9_9')).toBe('not_waiting');
  });
});
