import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunEvent } from '../../src/shared/run-types.js';
import { maxEchoedInputBytes, maxEchoedIssues, toJsonText, utf8ByteLength } from '../../src/shared/payload-limits.js';
import type { ProposedToolCall } from '../../src/shared/transcript.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import type { ScriptedTurn } from '../../src/testing/scripted-model.js';
import { useRelayTestKit } from '../helpers/relay-test-kit.js';
import type { RunningWorker } from '../helpers/relay-test-kit.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';
import { bySize, reliabilitySeed, writeResults } from './reliability-kit.js';
import { scopedRunId } from '../../src/shared/run-ids.js';
import { chosenPart } from '../helpers/chosen-run-id.js';

const size = bySize({ small: { batches: 6, batchSize: 12 }, large: { batches: 40, batchSize: 25 } });
/** Smaller than the 1 MiB default, so oversized responses are cheap to make; the mechanism is the same. */
const maxModelResponseBytes = 256 * 1024;
const seed = reliabilitySeed();
const kit = useRelayTestKit();
let worker: RunningWorker;
const turns = new Map<string, ScriptedTurn>();

beforeAll(async () => {
  worker = await kit.startWorker({
    tools: createTestTools(createLedger()),
    // Step 1 plays the fuzzed turn; step 2 answers, so every run that survives step 1 ends.
    models: {
      scripted: scriptedModel((call) => (call.step === 1 ? turns.get(call.runId) : undefined) ?? { text: 'ok' }),
    },
    maxModelResponseBytes,
  });
});

afterAll(async () => {
  await worker?.stop();
});

function nested(depth: number): unknown {
  let value: unknown = { a: 1 };
  for (let level = 0; level < depth; level++) value = level % 2 === 0 ? { deeper: value } : [value];
  return value;
}

const toolName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('add', 'transfer_funds', 'echo_after') },
  { weight: 2, arbitrary: fc.string({ maxLength: 70 }) },
  { weight: 1, arbitrary: fc.integer({ min: 65, max: 100_000 }).map((length) => 'n'.repeat(length)) },
);

const wrongInput = fc.oneof(
  fc.record({ a: fc.anything(), b: fc.anything() }, { requiredKeys: [] }),
  fc.record({ from: fc.string(), to: fc.anything(), amount: fc.oneof(fc.double(), fc.string()) }, { requiredKeys: [] }),
  fc.record({ value: fc.anything(), delayMs: fc.oneof(fc.integer({ min: -10, max: 10_000 }), fc.double()) }),
  fc.anything(),
  fc.jsonValue(),
  fc.string(),
  fc.json().map((json) => json.slice(0, Math.max(0, json.length - 1))),
  fc.integer({ min: 1, max: 20_000 }).map(nested),
  fc
    .integer({ min: 1_000, max: 50_000 })
    .map((length) => ({ a: Array.from({ length }, (_, index) => `${index}`), b: 1 })),
  fc.integer({ min: 1_000, max: 300_000 }).map((length) => ({ a: 'x'.repeat(length), b: 2 })),
);

const validInput = fc.oneof(
  fc.record({ a: fc.integer(), b: fc.integer() }),
  fc.record({ value: fc.string({ maxLength: 20 }), delayMs: fc.constant(0) }),
);

const call: fc.Arbitrary<ProposedToolCall> = fc.record(
  {
    id: fc.oneof(fc.constantFrom('dup', 'call', ''), fc.string({ maxLength: 200 })),
    name: toolName,
    input: fc.oneof({ weight: 5, arbitrary: wrongInput }, { weight: 1, arbitrary: validInput }),
  },
  { requiredKeys: ['name', 'input'] },
);

const turn: fc.Arbitrary<ScriptedTurn> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ toolCalls: fc.array(call, { minLength: 1, maxLength: 5 }), text: fc.string() }) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 400_000 }).map((length) => ({ text: 't'.repeat(length) })) },
);

interface Outcome {
  calls: number;
  validationFailures: number;
  workflowTasksFailed: number;
  oversized: boolean;
  unencodable: boolean;
  status: 'completed' | 'failed';
}

/** Plays one turn in a fresh run and checks what the run made of it. */
async function play(fuzzed: ScriptedTurn): Promise<Outcome> {
  const runId = scopedRunId('fuzz', `fuzz-${randomUUID()}`);
  turns.set(runId, fuzzed);
  const json = toJsonText({ ...fuzzed, toolCalls: fuzzed.toolCalls });
  const unencodable = json === undefined;
  const oversized = !unencodable && utf8ByteLength(json) > maxModelResponseBytes - 1_024;
  await worker.client.startRun({
    runId: chosenPart(runId),
    tenantId: 'fuzz',
    model: 'scripted:fuzz',
    prompt: 'go',
    approvalTimeout: 200,
  });
  const status = await worker.client.result(runId).then(
    () => 'completed' as const,
    (error: unknown) => {
      if (!(error instanceof WorkflowFailedError)) throw error;
      return 'failed' as const;
    },
  );
  const history = await kit.temporal.workflow.getHandle(runId).fetchHistory();
  const workflowTasksFailed = (history.events ?? []).filter((event) => event.workflowTaskFailedEventAttributes).length;
  const events = await worker.client.events(runId);
  turns.delete(runId);

  expect(workflowTasksFailed, runId).toBe(0);
  const calls = fuzzed.toolCalls?.length ?? 0;
  if (status === 'failed') {
    // Only a response the engine must refuse may fail the run: too large, or not encodable at all.
    const failure = events.find(
      (event): event is Extract<RunEvent, { type: 'run_failed' }> => event.type === 'run_failed',
    );
    expect(oversized || unencodable, failure?.error).toBe(true);
    return { calls, validationFailures: 0, workflowTasksFailed, oversized, unencodable, status };
  }
  const checked = events.filter(
    (event) => event.type === 'tool_call_validated' || event.type === 'tool_validation_failed',
  );
  expect(checked).toHaveLength(calls);
  expect(new Set(checked.map((event) => ('toolCallId' in event ? event.toolCallId : ''))).size).toBe(calls);
  const failures = events.filter(
    (event): event is Extract<RunEvent, { type: 'tool_validation_failed' }> => event.type === 'tool_validation_failed',
  );
  for (const failure of failures) {
    expect(utf8ByteLength(toJsonText(failure.input) ?? '')).toBeLessThanOrEqual(maxEchoedInputBytes + 200);
    expect(failure.issues.length).toBeLessThanOrEqual(maxEchoedIssues + 1);
    expect(failure.toolName.length).toBeLessThanOrEqual(128);
  }
  expect(events.at(-1)?.type).toBe('run_completed');
  return { calls, validationFailures: failures.length, workflowTasksFailed, oversized, unencodable, status };
}

it(
  'turns every malformed, huge or duplicated tool call into a validation result for the model and never fails a workflow task',
  async () => {
    const outcomes: Outcome[] = [];
    await fc.assert(
      fc.asyncProperty(fc.array(turn, { minLength: size.batchSize, maxLength: size.batchSize }), async (batch) => {
        outcomes.push(...(await Promise.all(batch.map(play))));
      }),
      { seed, numRuns: size.batches, endOnFailure: true },
    );
    const failed = outcomes.filter((outcome) => outcome.status === 'failed');
    await writeResults('model-output-fuzz', {
      seed,
      runsHeld: outcomes.length,
      toolCallsTried: outcomes.reduce((sum, outcome) => sum + outcome.calls, 0),
      validationFailuresReturnedToModel: outcomes.reduce((sum, outcome) => sum + outcome.validationFailures, 0),
      responsesOverLimit: outcomes.filter((outcome) => outcome.oversized).length,
      responsesNotEncodable: outcomes.filter((outcome) => outcome.unencodable).length,
      runsFailedByLimit: failed.length,
      workflowTasksFailed: outcomes.reduce((sum, outcome) => sum + outcome.workflowTasksFailed, 0),
      maxModelResponseBytes,
      maxEchoedInputBytes,
      maxEchoedIssues,
    });
    expect(outcomes.length).toBe(size.batches * size.batchSize);
  },
  bySize({ small: 240_000, large: 3_600_000 }),
);

it('fails a run whose model response is over the limit with payload_too_large before Temporal sees it', async () => {
  const runId = scopedRunId('fuzz', `fuzz-big-${randomUUID()}`);
  turns.set(runId, { toolCalls: [{ name: 'add', input: { a: 'x'.repeat(maxModelResponseBytes), b: 1 } }] });
  await worker.client.startRun({ runId: chosenPart(runId), tenantId: 'fuzz', model: 'scripted:fuzz', prompt: 'go' });
  await expect(worker.client.result(runId)).rejects.toBeInstanceOf(WorkflowFailedError);
  const history = await kit.temporal.workflow.getHandle(runId).fetchHistory();
  const activityFailure = history.events?.find((event) => event.activityTaskFailedEventAttributes)
    ?.activityTaskFailedEventAttributes?.failure;
  expect(activityFailure?.applicationFailureInfo).toMatchObject({ type: 'payload_too_large', nonRetryable: true });
  expect(activityFailure?.message).toContain('maxModelResponseBytes');
});
