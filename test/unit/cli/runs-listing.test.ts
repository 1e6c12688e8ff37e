import type { WorkflowExecutionInfo } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { approvalsCommand } from '../../../src/cli/approvals-command.js';
import { runsCommand } from '../../../src/cli/runs-command.js';
import { RelayClient } from '../../../src/client/relay-client.js';
import { relaySearchAttributes } from '../../../src/shared/search-attributes.js';
import { fakeVisibility } from '../client/fake-visibility.js';
import type { ListingRequest } from '../client/fake-visibility.js';

const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 10, minute));

/** One listed execution, with the status it last published and how many calls it said wait. */
function execution(
  workflowId: string,
  status: WorkflowExecutionInfo['status']['name'],
  published: { status: string; pending: number; prompt?: string },
  startMinute: number,
  closeMinute?: number,
): WorkflowExecutionInfo {
  return {
    workflowId,
    status: { name: status },
    startTime: at(startMinute),
    ...(closeMinute === undefined ? {} : { closeTime: at(closeMinute) }),
    memo: { prompt: published.prompt ?? `prompt of ${workflowId}` },
    typedSearchAttributes: new TypedSearchAttributes([
      { key: relaySearchAttributes.tenant, value: 'demo' },
      { key: relaySearchAttributes.status, value: published.status },
      { key: relaySearchAttributes.pendingApprovals, value: published.pending },
    ]),
  } as unknown as WorkflowExecutionInfo;
}

let stdout = '';
let queries: string[] = [];

/** Runs `relay-e runs` over a visibility that lists `executions`, whatever the query, and keeps each query. */
async function runs(executions: WorkflowExecutionInfo[], ...argv: string[]): Promise<string> {
  const list = ({ query }: { query: string }) => {
    queries.push(query);
    return (async function* () {
      yield* executions;
    })();
  };
  const client = { temporal: { workflow: { list } }, close: async () => undefined };
  vi.spyOn(RelayClient, 'connect').mockResolvedValue(client as unknown as RelayClient);
  await runsCommand.run(['--task-queue', 'orders', ...argv]);
  return stdout;
}

beforeEach(() => {
  stdout = '';
  queries = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (stdout += String(chunk)).length > 0);
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('relay-e runs', () => {
  it('shows a run Temporal terminated while it waited as failed with nothing pending, as GET /v1/runs does', async () => {
    const table = await runs([
      execution('run_a', 'RUNNING', { status: 'running', pending: 0 }, 3),
      execution('run_b', 'TERMINATED', { status: 'awaiting_approval', pending: 1 }, 2, 4),
    ]);
    expect(table).toMatch(/^run_a\s+running\s+0\s+demo\s/m);
    expect(table).toMatch(/^run_b\s+failed\s+0\s+demo\s/m);
  });

  it("asks for each run once (not the executions it continued as new from), on the project's task queue", async () => {
    await runs([]);
    expect(queries).toEqual([
      `(WorkflowType = 'agentRun') AND (ExecutionStatus != 'ContinuedAsNew') AND (TaskQueue = 'orders')`,
    ]);
  });

  it('filters --status by what Temporal says of a closed run, and by the published status of an open one', async () => {
    await runs([], '--status', 'failed');
    await runs([], '--status', 'awaiting_approval', '--tenant', 'acme');
    expect(queries).toEqual([
      `(WorkflowType = 'agentRun') AND (ExecutionStatus != 'ContinuedAsNew') AND (TaskQueue = 'orders') AND ` +
        `(ExecutionStatus IN ('Failed', 'Terminated', 'TimedOut'))`,
      `(WorkflowType = 'agentRun' AND RelayTenant = 'acme') AND (ExecutionStatus != 'ContinuedAsNew') AND ` +
        `(TaskQueue = 'orders') AND (ExecutionStatus = 'Running' AND RelayStatus = 'awaiting_approval')`,
    ]);
  });

  it('prints with --json each run as GET /v1/runs lists it, with its tenant', async () => {
    const listed = await runs([execution('run_b', 'TIMED_OUT', { status: 'running', pending: 0 }, 2, 4)], '--json');
    expect(JSON.parse(listed)).toEqual([
      {
        runId: 'run_b',
        tenantId: 'demo',
        status: 'failed',
        pendingApprovalCount: 0,
        prompt: 'prompt of run_b',
        startedAt: at(2).toISOString(),
        closedAt: at(4).toISOString(),
      },
    ]);
  });

  it('keeps a prompt with line breaks on its row', async () => {
    const prompt = 'Summarise:\nline two of run_a\r\n\tand three';
    const table = await runs([execution('run_a', 'RUNNING', { status: 'running', pending: 0, prompt }, 3)]);
    expect(table.trim().split('\n')).toHaveLength(2);
    expect(table).toMatch(
      /^run_a\s+running\s+0\s+demo\s+2026-01-01 10:03:00\s+Summarise: line two of run_a and three$/m,
    );
  });
});

describe('relay-e approvals', () => {
  it("lists the waiting calls of the project's task queue only", async () => {
    const requests: ListingRequest[] = [];
    const temporal = fakeVisibility([], { requests });
    try {
      const client = RelayClient.fromClient(temporal, { taskQueue: 'orders' });
      vi.spyOn(RelayClient, 'connect').mockResolvedValue(client);
      await approvalsCommand.run(['--task-queue', 'orders', '--tenant', 'acme']);
      expect(requests.map((request) => request.query)).toEqual([
        `(WorkflowType = 'agentRun' AND RelayTenant = 'acme') AND (ExecutionStatus != 'ContinuedAsNew') AND ` +
          `(TaskQueue = 'orders') AND (ExecutionStatus = 'Running' AND RelayPendingApprovals > 0)`,
      ]);
      expect(stdout).toBe('No tool call of tenant acme waits for a human.\n');
    } finally {
      await temporal.connection.close();
    }
  });
});
