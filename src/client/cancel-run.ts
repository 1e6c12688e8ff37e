import { randomUUID } from 'node:crypto';
import { NamespaceNotFoundError } from '@temporalio/client';
import { RelayError } from '../shared/errors.js';
import { maxDecisionReasonLength } from '../shared/run-types.js';
import type { CancelOptions, TenantScope } from './relay-client.js';
import { callRun, checkTenant } from './run-access.js';
import type { RunAccess } from './run-access.js';
import { missingNamespaceOf } from './temporal-unavailable.js';

/** Cancels a run for `RelayClient.cancel`, once its `by` and `reason` pass the checks here and its tenant the scope. */
export async function cancelRun(
  access: RunAccess,
  runId: string,
  scope: TenantScope,
  options: CancelOptions,
): Promise<void> {
  refuseBadCancelOptions(options);
  // Checked without a query, so a run no worker can answer for right now can still be cancelled.
  await checkTenant(access, runId, scope);
  await callRun(access, runId, () => requestCancel(access, runId, options));
}

/** Refuses a cancel's `by` or `reason` that is not text or is longer than a decision's reason may be (or `by` empty). */
function refuseBadCancelOptions({ by, reason }: CancelOptions): void {
  refuseUnlessText('by', by, 1);
  refuseUnlessText('reason', reason, 0);
}

function refuseUnlessText(field: keyof CancelOptions, value: unknown, shortest: number): void {
  if (value === undefined) return;
  const ok = typeof value === 'string' && value.length >= shortest && value.length <= maxDecisionReasonLength;
  if (ok) return;
  const given = typeof value === 'string' ? `${value.length} characters` : typeof value;
  throw new RelayError(
    'invalid_input',
    `A cancel's ${field} is text of ${shortest} to ${maxDecisionReasonLength} characters, not ${given}`,
  );
}

/**
 * The request `WorkflowHandle.cancel()` sends (which takes no identity or reason), with the caller's identity and
 * reason. Sent on the service itself, so the client's workflow interceptors do not see it.
 */
async function requestCancel(access: RunAccess, runId: string, { by, reason }: CancelOptions): Promise<void> {
  const { namespace, identity } = access.temporal.workflow.options;
  try {
    await access.temporal.workflowService.requestCancelWorkflowExecution({
      namespace,
      workflowExecution: { workflowId: runId },
      identity: by !== undefined ? `relay-e: ${by}` : identity,
      requestId: randomUUID(),
      ...(reason !== undefined ? { reason } : {}),
    });
  } catch (error) {
    // A missing namespace is NOT_FOUND too: thrown as the SDK's handle throws it, not as a missing run.
    const missingNamespace = missingNamespaceOf(error);
    throw missingNamespace !== undefined ? new NamespaceNotFoundError(missingNamespace) : error;
  }
}
