import type { CancelOptions, RelayClient } from '../client/relay-client.js';
import { RelayError } from '../shared/errors.js';
import { isTerminalStatus } from '../shared/run-types.js';
import type { RunStatus } from '../shared/run-types.js';

/** What a cancel answers: `cancelling` when the request reached the run, or the status an ended run ended with. */
export interface CancelOutcome {
  runId: string;
  status: 'cancelling' | Exclude<RunStatus, 'running' | 'awaiting_approval'>;
}

/**
 * Cancels one of the tenant's runs in the name of `options.by` (and for `options.reason`), leaving one that already
 * ended as it is; the API and the inbox both answer with this. A cancel of a closed workflow does not say the run had
 * ended (Temporal accepts it and does nothing), so the run's snapshot is read first.
 */
export async function cancelUnlessEnded(
  client: RelayClient,
  runId: string,
  tenantId: string,
  options: CancelOptions,
): Promise<CancelOutcome> {
  // Only an open run is unavailable (a closed one no worker answers for reads from its description): cancel it.
  const snapshot = await client.getRun(runId, { tenantId }).catch((error: unknown) => {
    if (RelayError.hasCode(error, 'run_unavailable')) return undefined;
    throw error;
  });
  if (snapshot && isTerminalStatus(snapshot.status)) return { runId, status: snapshot.status };
  await client.cancel(runId, { tenantId }, options);
  return { runId, status: 'cancelling' };
}

/** The status a cancel answers with: 202 when the request reached the run, 200 when the run had already ended. */
export function cancelStatusOf(outcome: CancelOutcome): 200 | 202 {
  return outcome.status === 'cancelling' ? 202 : 200;
}
