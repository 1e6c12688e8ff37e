import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { createActivities } from '../../../activities/index.js';
import type { OwnModelCallQueue } from '../../../activities/index.js';
import { ModelRegistry } from '../../../src/model/model-registry.js';
import type { ModelContextRequest } from '../../../src/shared/transcript.js';
import { scriptedModel } from '../../../src/testing/scripted-model.js';
import { ToolExecutor } from '../../../src/tool/tool-executor.js';
import { ToolRegistry } from '../../../src/tool/tool-registry.js';

/** A run's first call by reference: everything whole, so any worker can serve it and store its context. */
const firstCall: ModelContextRequest = {
  model: 'scripted:test',
  step: 1,
  runId: 'run-1',
  tenantId: 'tenant-a',
  context: { append: [{ role: 'user', content: 'Hello.' }], tools: { specs: [] } },
};

/** What a worker stored for a run's first call that came by `arrivedOn`, with what it says of the next call. */
async function storedFor(arrivedOn: string, own: OwnModelCallQueue | undefined) {
  const registry = new ToolRegistry([]);
  const activities = createActivities({
    registry,
    executor: new ToolExecutor(registry),
    models: new ModelRegistry({ scripted: scriptedModel([{ text: 'done' }]) }),
    ...(own ? { modelCallQueue: () => own } : {}),
  });
  const environment = new MockActivityEnvironment({ taskQueue: arrivedOn });
  const callModel = (request: ModelContextRequest) => activities.callModel(request);
  const result = await environment.run<[ModelContextRequest], Awaited<ReturnType<typeof callModel>>, typeof callModel>(
    callModel,
    firstCall,
  );
  expect(result.stored?.context).toMatch(/^sha256:/);
  return result.stored;
}

/** What the worker's result says of the queue for the run's next call, for a call that came by `arrivedOn`. */
async function nextQueueNamed(arrivedOn: string, own: OwnModelCallQueue | undefined) {
  const stored = await storedFor(arrivedOn, own);
  return stored && 'workerQueue' in stored ? stored.workerQueue : 'absent';
}

describe("the model call's word on where the run's next call goes", () => {
  const own = 'agents/model-calls/0123456789abcdef';

  it("names the worker's own queue for a call that came by the shared one", async () => {
    expect(await nextQueueNamed('agents', { name: own, open: true })).toBe(own);
  });

  it('says nothing for a call that came by the own queue, which the run already uses', async () => {
    expect(await nextQueueNamed(own, { name: own, open: true })).toBe('absent');
  });

  it('sends the run back to the shared queue (null) when the worker is shutting down', async () => {
    expect(await nextQueueNamed(own, { name: own, open: false })).toBeNull();
    expect(await nextQueueNamed('agents', { name: own, open: false })).toBe('absent');
  });

  it("names the worker's own start wait beside its queue only, and no wait when it sets none", async () => {
    expect((await storedFor('agents', { name: own, open: true, startTimeoutMs: 30_000 }))?.workerQueueStartMs).toBe(
      30_000,
    );
    expect((await storedFor('agents', { name: own, open: true }))?.workerQueueStartMs).toBeUndefined();
    expect(
      (await storedFor(own, { name: own, open: false, startTimeoutMs: 30_000 }))?.workerQueueStartMs,
    ).toBeUndefined();
  });

  it('says nothing on a worker without a queue of its own', async () => {
    expect(await nextQueueNamed('agents', undefined)).toBe('absent');
  });
});
