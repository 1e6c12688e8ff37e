import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { recordHistory, replayHistories } from '../../src/testing/replay-histories.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import type { TranscriptMessage } from '../../src/shared/transcript.js';
import { defineJsonSchemaTool } from '../../src/tool/define-tool.js';
import { eventTypes, useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';
import { currentHistoryFile, recordHistoryIfRequested } from '../helpers/replay-histories.js';

const kit = useRelayTestKit();

/**
 * A value that is text, a number, or a list of such values, any number of lists deep. The `allOf` makes Zod merge
 * what each branch read at every level, so checking a value takes time that grows with the square of its depth.
 */
const nestedListSchema = {
  type: 'object',
  properties: { value: { $ref: '#/$defs/value' } },
  required: ['value'],
  $defs: {
    value: {
      allOf: [
        { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'array', items: { $ref: '#/$defs/value' } }] },
        { type: ['string', 'number', 'array'] },
      ],
    },
  },
};

/** `{ value: [[[…'x'…]]] }`, the text `levels` lists deep. */
function nestedLists(levels: number): { value: unknown } {
  let value: unknown = 'x';
  for (let level = 0; level < levels; level += 1) value = [value];
  return { value };
}

describe('a tool call whose input nests deeper than a check may follow', () => {
  /**
   * Before the `input-depth-bounded` rule, the check of the first call outlasted the workflow task's time limit
   * ("Script execution timed out"): the task failed on every attempt and the run never moved again.
   */
  it('goes back to the model as too deep, unchecked, and the run goes on with its next call', async () => {
    const stored: unknown[] = [];
    const store = defineJsonSchemaTool({
      name: 'store',
      description: 'Stores a value.',
      inputSchema: nestedListSchema,
      execute: (input) => {
        stored.push(input);
        return 'stored';
      },
    });
    const seenByModel: TranscriptMessage[][] = [];
    const model = scriptedModel((call) => {
      seenByModel.push(call.messages);
      if (call.step === 1) return { toolCalls: [{ name: 'store', input: nestedLists(3_500) }] };
      if (call.step === 2) return { toolCalls: [{ name: 'store', input: nestedLists(128 - 1) }] };
      return { text: 'Stored.' };
    });
    const running = await kit.startWorker({ tools: [store], models: { scripted: model } });
    try {
      const { client } = running;
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'store it' });
      expect((await client.result(runId)).output).toBe('Stored.');
      await recordHistoryIfRequested(kit.temporal.workflow.getHandle(runId), currentHistoryFile('input-too-deep'));
      const events = await client.events(runId);
      const tooDeep = { path: '', code: 'input_too_deep', message: 'Input is nested more than 128 levels deep' };
      expect(events.find((event) => event.type === 'tool_validation_failed')).toMatchObject({
        toolCallId: 'call_1_0',
        issues: [tooDeep],
      });
      expect(seenByModel[1]?.find((message) => message.role === 'tool')).toMatchObject({
        result: { success: false, errorType: 'validation', issues: [tooDeep] },
      });
      // The object holding the lists is one level: 127 lists in it are 128 levels, the most an input may nest.
      expect(eventTypes(events).filter((type) => type === 'tool_succeeded')).toHaveLength(1);
      expect(stored).toEqual([nestedLists(128 - 1)]);
    } finally {
      await running.stop();
    }
  });
});

describe('a tool call nested deeper than JSON encoding reaches', () => {
  /**
   * Before the model activity cut such an input, its result could not be encoded and the run failed with
   * `model_error` ("The model response cannot be encoded as JSON"): the model was never told what was wrong.
   */
  it('is recorded cut below the bound, and goes back to the model as too deep', async () => {
    const store = defineJsonSchemaTool({
      name: 'store',
      description: 'Stores a value.',
      inputSchema: nestedListSchema,
      execute: () => 'stored',
    });
    const model = scriptedModel((call) =>
      call.step === 1 ? { toolCalls: [{ name: 'store', input: nestedLists(50_000) }] } : { text: 'Gave up.' },
    );
    const running = await kit.startWorker({ tools: [store], models: { scripted: model } });
    try {
      const { client } = running;
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'store it' });
      expect((await client.result(runId)).output).toBe('Gave up.');
      const events = await client.events(runId);
      // The object holding the lists is the first level; the lists below the 128th are cut to an empty one.
      expect(events.find((event) => event.type === 'tool_validation_failed')).toMatchObject({
        toolCallId: 'call_1_0',
        issues: [{ path: '', code: 'input_too_deep', message: 'Input is nested more than 128 levels deep' }],
        input: cutLists(127),
      });
    } finally {
      await running.stop();
    }
  });
});

/** `{ value: [[…[]…]] }`: `levels` lists around an empty one, as a value nested deeper is recorded. */
function cutLists(levels: number): { value: unknown } {
  let value: unknown = [];
  for (let level = 0; level < levels; level += 1) value = [value];
  return { value };
}

describe("an approver's edit nested deeper than a check may follow", () => {
  /**
   * The update's validator asks the run's rule first: before, it recorded the rule's marker in the task, and since a
   * refused update leaves nothing else in history and validators do not run on replay, every replay of the run failed
   * with a nondeterminism error ("Non-deprecated patch marker encountered for change input-depth-bounded").
   */
  it('is refused by the update, and the run, approved after, replays as it ran', async () => {
    const ledger = createLedger();
    const turns = [
      { toolCalls: [{ name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 5 } }] },
      { text: 'Paid.' },
    ];
    const running = await kit.startWorker({
      tools: createTestTools(ledger),
      models: { scripted: scriptedModel(turns) },
    });
    const folder = await mkdtemp(path.join(tmpdir(), 'relay-e-deep-edit-'));
    try {
      const { client } = running;
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'pay' });
      await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
      const edit = { from: 'A', to: 'B', amount: nestedLists(200).value };
      await expect(client.approve(runId, 'call_1_0', { approver: 'alice', input: edit })).rejects.toMatchObject({
        code: 'approval_input_invalid',
        message: expect.stringContaining('Input is nested more than 128 levels deep') as unknown,
      });
      await client.approve(runId, 'call_1_0', { approver: 'alice' });
      expect((await client.result(runId)).output).toBe('Paid.');
      expect(ledger.transfers).toHaveLength(1);

      await recordHistory(kit.temporal.workflow.getHandle(runId), path.join(folder, 'run.json'));
      await expect(replayHistories(folder)).resolves.toEqual(['run.json']);
    } finally {
      await rm(folder, { recursive: true, force: true });
      await running.stop();
    }
  });
});
