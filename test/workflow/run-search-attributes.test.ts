import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readHistory } from '../../src/client/read-history.js';
import { relaySearchAttributes } from '../../src/shared/search-attributes.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { useRelayTestKit } from '../helpers/relay-test-kit.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';

// Where a run's search attributes come from: the starter's start request, or the run's own first upsert when the
// start carried none. Real dev server, real histories.

const kit = useRelayTestKit();

const relayKeys = ['RelayTenant', 'RelayUser', 'RelayStatus', 'RelayPendingApprovals'];

/** The Relay-E keys each search-attribute upsert of the run's history set, in history order, with its event id. */
async function relayUpserts(runId: string): Promise<Array<{ eventId: number; keys: string[] }>> {
  const history = await readHistory(kit.temporal, runId);
  return (history.events ?? []).flatMap((event) => {
    const fields = event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {};
    const keys = Object.keys(fields).filter((key) => relayKeys.includes(key));
    return keys.length > 0 ? [{ eventId: Number(event.eventId), keys: keys.sort() }] : [];
  });
}

async function firstActivityEventId(runId: string): Promise<number> {
  const history = await readHistory(kit.temporal, runId);
  const scheduled = (history.events ?? []).find((event) => event.activityTaskScheduledEventAttributes);
  return Number(scheduled?.eventId);
}

describe("a run's search attributes", () => {
  it('are not upserted at start when RelayClient set them on the start request: one upsert, at the end', async () => {
    const { client, stop } = await kit.startWorker({
      tools: createTestTools(createLedger()),
      models: { scripted: scriptedModel([{ toolCalls: [{ name: 'add', input: { a: 1, b: 2 } }] }, { text: '3' }]) },
    });
    try {
      const { runId } = await client.startRun({ tenantId: 'acme', userId: 'u1', model: 'scripted:test', prompt: 'go' });
      await client.result(runId);

      const upserts = await relayUpserts(runId);
      expect(upserts).toHaveLength(1);
      expect(upserts[0]?.eventId).toBeGreaterThan(await firstActivityEventId(runId));
      const attributes = (await kit.temporal.workflow.getHandle(runId).describe()).typedSearchAttributes;
      expect(attributes.get(relaySearchAttributes.tenant)).toBe('acme');
      expect(attributes.get(relaySearchAttributes.user)).toBe('u1');
      expect(attributes.get(relaySearchAttributes.status)).toBe('completed');
    } finally {
      await stop();
    }
  });

  it('are upserted at start when the run was started with a plain Temporal client that set none', async () => {
    const { taskQueue, stop } = await kit.startWorker({
      tools: createTestTools(createLedger()),
      models: { scripted: scriptedModel([{ text: 'Hello.' }]) },
    });
    try {
      const workflowId = `plain-start-${randomUUID()}`;
      const handle = await kit.temporal.workflow.start('agentRun', {
        taskQueue,
        workflowId,
        args: [{ tenantId: 'acme', model: 'scripted:test', prompt: 'hi' }],
      });
      await handle.result();

      const upserts = await relayUpserts(workflowId);
      const keys = ['RelayPendingApprovals', 'RelayStatus', 'RelayTenant'];
      expect(upserts.map((upsert) => upsert.keys)).toEqual([keys, keys]);
      expect(upserts[0]?.eventId).toBeLessThan(await firstActivityEventId(workflowId));
      const attributes = (await handle.describe()).typedSearchAttributes;
      expect(attributes.get(relaySearchAttributes.tenant)).toBe('acme');
      expect(attributes.get(relaySearchAttributes.status)).toBe('completed');
    } finally {
      await stop();
    }
  });
});
