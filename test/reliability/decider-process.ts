/**
 * An approver in its own process: finds its tenant's pending approvals the way an approval console does
 * (`listPendingApprovals`), decides each one, and sends every decision twice to show the second is refused.
 * Prints one JSON line per decision. Environment: TEMPORAL_ADDRESS, TASK_QUEUE, TENANT_ID, EXPECTED_DECISIONS.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { RelayClient } from '../../src/client/relay-client.js';
import { RelayError } from '../../src/shared/errors.js';

const { TEMPORAL_ADDRESS: address, TASK_QUEUE: taskQueue, TENANT_ID: tenantId } = process.env;
const expected = Number(process.env['EXPECTED_DECISIONS']);
if (!address || !taskQueue || !tenantId || !Number.isInteger(expected)) {
  throw new Error('TEMPORAL_ADDRESS, TASK_QUEUE, TENANT_ID and EXPECTED_DECISIONS are required');
}

const client = await RelayClient.connect({ address, taskQueue });
const decided = new Set<string>();
const inFlight: Array<Promise<void>> = [];
process.stdout.write('ready\n');

/** Every fifth run (by the digit its id ends with) is rejected; the rest are approved. */
const decisionFor = (runId: string) => (Number(runId.at(-1)) % 5 === 0 ? 'reject' : 'approve');

async function decide(runId: string, toolCallId: string, requestedAt: string): Promise<void> {
  const decision = decisionFor(runId);
  const send = () =>
    decision === 'approve'
      ? client.approve(runId, toolCallId, { tenantId, approver: 'load-approver' })
      : client.reject(runId, toolCallId, { tenantId, approver: 'load-approver' });
  const sentAt = Date.now();
  const [first, second] = await Promise.allSettled([send(), send()]);
  const acceptedAt = Date.now();
  const refusals = [first, second].filter(
    (result) =>
      result.status === 'rejected' &&
      RelayError.isInstance(result.reason) &&
      result.reason.code === 'approval_not_pending',
  ).length;
  const accepted = [first, second].filter((result) => result.status === 'fulfilled').length;
  const line = {
    runId,
    toolCallId,
    decision,
    accepted,
    refusals,
    roundTripMs: acceptedAt - sentAt,
    waitedMs: acceptedAt - Date.parse(requestedAt),
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

while (decided.size < expected) {
  const { approvals: pending } = await client.listPendingApprovals({ tenantId, limit: 1_000 });
  for (const approval of pending) {
    const key = `${approval.runId}/${approval.toolCallId}`;
    if (decided.has(key)) continue;
    decided.add(key);
    inFlight.push(decide(approval.runId, approval.toolCallId, approval.requestedAt));
  }
  await sleep(100);
}
await Promise.all(inFlight);
await client.close();
