import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { writeOneLineLog } from '../../../src/cli/one-line-log.js';

function logged(meta: Record<string, unknown>, stacks = false): string[] {
  const lines: string[] = [];
  writeOneLineLog(
    { level: 'WARN', message: 'Workflow failed', timestampNanos: 1_767_225_600_000_000_000n, meta },
    { stacks, write: (line) => lines.push(line) },
  );
  return lines;
}

describe('writeOneLineLog', () => {
  const failure = ApplicationFailure.create({
    type: 'run_failed',
    message: "No model provider 'nobody'\non this worker",
    cause: new Error('the cause'),
  });

  it('writes the message, the fields naming the run and the error chain on one line', () => {
    expect(logged({ workflowId: 'run-1', workflowType: 'agentRun', namespace: 'default', error: failure })).toEqual([
      '2026-01-01T00:00:00.000Z [WARN] Workflow failed workflowId=run-1 workflowType=agentRun ' +
        "error=ApplicationFailure(run_failed): No model provider 'nobody' on this worker ← Error: the cause\n",
    ]);
  });

  it('adds the stack on the lines after when asked', () => {
    const [line, stack] = logged({ error: failure }, true);
    expect(line).toContain('error=ApplicationFailure(run_failed)');
    expect(stack).toMatch(/^ApplicationFailure: No model provider[^]*\n\s+at /);
  });

  it('writes a value thrown that is not an Error on the same line', () => {
    expect(logged({ error: { reason: 'odd', depth: 2 } })[0]).toMatch(/error=\{ reason: 'odd', depth: 2 \}\n$/);
  });
});
