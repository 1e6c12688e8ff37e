import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as activities from '../fixtures/smoke/smoke-activities.js';
import { smokeWorkflow } from '../fixtures/smoke/smoke-workflow.js';
import { recordHistoryIfRequested } from '../helpers/replay-histories.js';
import { connectTemporalTestEnv, uniqueWorkflowId, withWorker } from '../helpers/temporal-test-env.js';
import type { TemporalTestEnv } from '../helpers/temporal-test-env.js';

const workflowsPath = path.join(import.meta.dirname, '../fixtures/smoke/smoke-workflow.ts');
const smokeHistoryFile = path.join(import.meta.dirname, '../fixtures/histories/smoke/smoke-workflow.json');

describe('the Temporal test harness', () => {
  let env: TemporalTestEnv;
  beforeAll(async () => {
    env = await connectTemporalTestEnv();
  });
  afterAll(async () => {
    await env?.close();
  });

  it('runs a workflow that calls an activity on the real dev server', async () => {
    const handle = await withWorker(env, { workflowsPath, activities }, async ({ taskQueue }) => {
      const started = await env.client.workflow.start(smokeWorkflow, {
        taskQueue,
        workflowId: uniqueWorkflowId('smoke'),
        args: ['Relay'],
      });
      expect(await started.result()).toBe('Hello, Relay!');
      return started;
    });
    const history = await handle.fetchHistory();
    const scheduled = (history.events ?? []).map(
      (event) => event.activityTaskScheduledEventAttributes?.activityType?.name,
    );
    expect(scheduled.filter(Boolean)).toEqual(['greet']);
    await recordHistoryIfRequested(handle, smokeHistoryFile);
  });

  it('registers the Relay search attributes on the server', async () => {
    const { customAttributes } = await env.connection.operatorService.listSearchAttributes({
      namespace: env.namespace,
    });
    expect(Object.keys(customAttributes ?? {})).toEqual(
      expect.arrayContaining(['RelayTenant', 'RelayUser', 'RelayStatus', 'RelayPendingApprovals']),
    );
  });
});
