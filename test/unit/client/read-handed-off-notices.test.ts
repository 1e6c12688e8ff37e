import type { Client } from '@temporalio/client';
import { encodeToPayloads, loadDataConverter } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { describe, expect, it } from 'vitest';
import { readHandedOffNotices } from '../../../src/client/read-handed-off-notices.js';
import type { RunEvent } from '../../../src/shared/run-types.js';

const deliveredBy = 'approval-notices/exec-1';
/** The ids the run made for the notices it handed off (approval-notices.ts): an added notice is numbered. */
const handedOffIds = ['run-1/s1-c0/added-1', 'run-1/s1-c0/added-2', 'run-1/s1-c0/decided'];

function handedOff(notice: string, seq: number): RunEvent {
  return {
    type: 'tool_approval_notice_handed_off',
    toolCallId: 's1-c0',
    toolName: 'pay',
    notice,
    deliveredBy,
    seq,
    step: 1,
    at: '2026-01-01T00:00:00.000Z',
  } as RunEvent;
}

/**
 * A Temporal client whose only workflow is the hand-off one, still running: its history starts with the notices the
 * run handed it, encoded with the client's data converter.
 */
async function temporalWithRunningHandOff(): Promise<Client> {
  const converter = loadDataConverter();
  const notices = handedOffIds.map((id) => ({
    id,
    type: id.endsWith('decided') ? 'approval.decided' : 'approval.added',
  }));
  const payloads = await encodeToPayloads(converter, notices);
  const started = { eventId: 1, workflowExecutionStartedEventAttributes: { input: { payloads } } };
  const workflowService = {
    describeWorkflowExecution: async () => ({ workflowExecutionInfo: { historySizeBytes: 1_000, historyLength: 5 } }),
    getWorkflowExecutionHistory: async (request: { execution: { workflowId: string } }) => {
      if (request.execution.workflowId !== deliveredBy) throw new Error(`No workflow ${request.execution.workflowId}`);
      return { history: { events: [started] }, nextPageToken: new Uint8Array() };
    },
  };
  const handle = {
    describe: async () => ({ status: { name: 'RUNNING' } }),
    result: async () => Promise.reject(new Error('Still running')),
  };
  return {
    workflowService,
    options: { namespace: 'default', loadedDataConverter: converter },
    workflow: { getHandle: () => handle },
  } as unknown as Client;
}

describe('readHandedOffNotices', () => {
  it("lists the ids the hand-off workflow delivers, an added notice's number included", async () => {
    const events = [handedOff('approval.added', 1), handedOff('approval.added', 2), handedOff('approval.decided', 3)];
    const [listed] = await readHandedOffNotices(await temporalWithRunningHandOff(), events);
    expect(listed).toEqual({ deliveredBy, notices: handedOffIds, status: 'RUNNING' });
  });
});
