import { describe, expect, it } from 'vitest';
import type { RelayClient } from '../../../src/client/relay-client.js';
import { RelayError } from '../../../src/shared/errors.js';
import type { PendingApproval, RunSnapshot } from '../../../src/shared/run-types.js';
import { waitForApproval, waitForRun } from '../../../src/testing/wait-for-run.js';

function snapshot(overrides: Partial<RunSnapshot> = {}): RunSnapshot {
  return {
    runId: 'run_1',
    tenantId: 'acme',
    model: 'scripted:test',
    status: 'running',
    step: 1,
    maxSteps: 10,
    pendingApprovals: [],
    usage: { inputTokens: 0, outputTokens: 0 },
    startedAt: '2025-01-01T00:00:00.000Z',
    updatedAt: '2025-01-01T00:00:00.000Z',
    lastEventSeq: 1,
    ...overrides,
  };
}

/** A client whose `getRun` answers with each of `reads` in turn (an Error is thrown), then with the last forever. */
function clientReading(...reads: Array<RunSnapshot | Error>): RelayClient & { reads: number } {
  const client = {
    reads: 0,
    async getRun(): Promise<RunSnapshot> {
      const read = reads[Math.min(client.reads, reads.length - 1)];
      client.reads += 1;
      if (read instanceof Error) throw read;
      return read as RunSnapshot;
    },
  };
  return client as unknown as RelayClient & { reads: number };
}

const quick = { timeoutMs: 300, pollIntervalMs: 10 };
const never = () => false;

describe('waiting for a run', () => {
  it('names the last snapshot it saw when it times out, even after the reads that followed failed', async () => {
    const seen = snapshot({ step: 2, lastEventSeq: 7 });
    const client = clientReading(seen, seen, new RelayError('run_unavailable', 'worker gone'));
    const failure = await waitForRun(client, 'run_1', never, quick).catch((error: unknown) => error);
    expect((failure as Error).message).toContain(`last: ${JSON.stringify(seen)}; the last read failed: worker gone`);
  });

  it("fails at once, with the client's error, when there is no such run", async () => {
    const notFound = new RelayError('run_not_found', "Run 'typo' not found");
    const client = clientReading(notFound);
    const startedAt = Date.now();
    await expect(waitForRun(client, 'typo', never, { timeoutMs: 5_000 })).rejects.toBe(notFound);
    expect(Date.now() - startedAt).toBeLessThan(1_000);
    expect(client.reads).toBe(1);
  });
});

describe('waiting for an approval by call id', () => {
  const pending: PendingApproval = {
    toolCallId: 'call_1_0',
    toolName: 'refund_order',
    input: { orderId: 'o-1' },
    step: 1,
    requestedAt: '2025-01-01T00:00:00.000Z',
    expiresAt: '2025-01-02T00:00:00.000Z',
  };

  it('keeps waiting for an id no pending call has, then names the pending calls and the ids runs give', async () => {
    const client = clientReading(snapshot({ status: 'awaiting_approval', pendingApprovals: [pending] }));
    const failure = await waitForApproval(client, 'run_1', { ...quick, toolCallId: 'refund' }).catch(
      (error: unknown) => error,
    );
    expect(client.reads).toBeGreaterThan(1);
    expect((failure as Error).message).toMatch(
      /; it awaits approval of call_1_0, not refund: runs give calls their own ids \(call_<step>_<index>\)/,
    );
  });

  it("returns the pending call once it has the run's id", async () => {
    const client = clientReading(snapshot({ status: 'awaiting_approval', pendingApprovals: [pending] }));
    expect(await waitForApproval(client, 'run_1', { ...quick, toolCallId: 'call_1_0' })).toMatchObject(pending);
  });
});
