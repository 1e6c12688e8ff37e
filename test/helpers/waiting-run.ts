import type { StartRunOptions } from '../../src/client/relay-client.js';
import type { PendingApproval } from '../../src/shared/run-types.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import type { FileTestKit } from './relay-test-kit.js';
import { waitForRun } from './relay-test-kit.js';
import { uniqueTaskQueue } from './temporal-test-env.js';
import { createLedger, createTestTools } from './test-tools.js';

/**
 * A run of tenant `acme` whose one `transfer_funds` call waits for approval, on a task queue of its own, with its worker
 * stopped: nothing serves the run until the test starts a worker again with `start()` (the model then answers
 * `finalText`). The ledger records the transfers every worker makes.
 */
export async function waitingRunWithoutWorker(
  kit: FileTestKit,
  { finalText, ...input }: Partial<StartRunOptions> & { finalText: string },
) {
  const taskQueue = uniqueTaskQueue('waiting');
  const ledger = createLedger();
  const start = () =>
    kit.startWorker({
      taskQueue,
      tools: createTestTools(ledger),
      models: {
        scripted: scriptedModel([
          { toolCalls: [{ name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 5 } }] },
          { text: finalText },
        ]),
      },
    });
  const first = await start();
  const { client } = first;
  const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'pay', ...input });
  const waiting = await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
  await first.stop();
  const pending: PendingApproval = waiting.pendingApprovals[0]!;
  return { client, runId, ledger, taskQueue, pending, start };
}
