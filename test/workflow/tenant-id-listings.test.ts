import { describe, expect, it } from 'vitest';
import type { RelayClient } from '../../src/client/relay-client.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';

// A run may have any tenant id of 1 to 128 characters (the run input schema), and the listings find every one: a
// tenant whose id has spaces, quotes, backslashes or tabs lists its runs and approvals, and only its own. Real dev
// server (SQLite visibility), real runs waiting for a human.

const kit = useRelayTestKit();

const tenants = [
  // Spaces and a single quote: matched by the quoted id.
  `Acme Corp's team`,
  // Double quotes and backslashes, which Temporal's SQLite and PostgreSQL visibility never match in a query: found
  // by the part before them, then checked. The second looks like the first as those stores would escape it.
  `Acme Corp's "team"`,
  `Acme Corp's \\"team\\"`,
  // A backslash before a quote, and a query that would list every tenant's runs if it ended the string literal.
  `back\\slash\\' OR RelayTenant != '`,
  // Nothing before the double quote: every agent run is checked.
  `"quoted"\tteam`,
];

/** Asks again until visibility lists what `isCaughtUp` expects, for at most 20 s. */
async function eventually<T>(read: () => Promise<T>, isCaughtUp: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 20_000;
  let value = await read();
  while (!isCaughtUp(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await read();
  }
  return value;
}

async function startWaitingRun(client: RelayClient, tenantId: string): Promise<string> {
  const { runId } = await client.startRun({ tenantId, model: 'scripted:test', prompt: 'pay B', approvalTimeout: '1h' });
  await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
  return runId;
}

describe('tenant ids with spaces, quotes and backslashes', () => {
  it('list their own runs and approvals, and only theirs', async () => {
    const { client, stop } = await kit.startWorker({
      tools: createTestTools(createLedger()),
      models: {
        scripted: scriptedModel([
          { toolCalls: [{ id: 'pay', name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 1 } }] },
          { text: 'Paid.' },
        ]),
      },
    });
    try {
      const runIds = await Promise.all(tenants.map((tenantId) => startWaitingRun(client, tenantId)));
      for (const [index, tenantId] of tenants.entries()) {
        const runId = runIds[index];
        const page = await eventually(
          () => client.listRuns({ tenantId }),
          (listed) => listed.runs.some((run) => run.runId === runId && run.status === 'awaiting_approval'),
        );
        expect(
          page.runs.map((run) => [run.runId, run.status]),
          tenantId,
        ).toEqual([[runId, 'awaiting_approval']]);

        const approvals = await eventually(
          () => client.listPendingApprovals({ tenantId }),
          (listed) => listed.approvals.length > 0,
        );
        expect(
          approvals.approvals.map((approval) => [approval.runId, approval.toolName]),
          tenantId,
        ).toEqual([[runId, 'transfer_funds']]);
      }
    } finally {
      await stop();
    }
  });
});
