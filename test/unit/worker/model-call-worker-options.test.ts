import type { CustomSlotSupplier, ActivitySlotInfo } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { RelayError } from '../../../src/shared/errors.js';
import { modelDeltaBatchMs } from '../../../src/shared/run-types.js';
import { scriptedModel } from '../../../src/testing/scripted-model.js';
import { modelCallSlotsOf } from '../../../src/worker/model-call-worker.js';
import { RelayPlugin } from '../../../src/worker/relay-plugin.js';

const custom: CustomSlotSupplier<ActivitySlotInfo> = {
  type: 'custom',
  reserveSlot: () => Promise.resolve({}),
  tryReserveSlot: () => ({}),
  markSlotUsed: () => undefined,
  releaseSlot: () => undefined,
};
const fixed = { type: 'fixed-size', numSlots: 4 } as const;

describe('the model-call worker’s activity slots', () => {
  it('are the SDK’s default when the worker names none', () => {
    expect(modelCallSlotsOf({})).toEqual({});
  });

  it('are as many as the worker’s own activities get when it names a number', () => {
    expect(modelCallSlotsOf({ maxConcurrentActivityTaskExecutions: 7 })).toEqual({
      maxConcurrentActivityTaskExecutions: 7,
    });
  });

  it('come from the same supplier as the worker’s activity slots, the other kinds left at one unused slot', () => {
    const slots = modelCallSlotsOf({
      tuner: {
        activityTaskSlotSupplier: custom,
        workflowTaskSlotSupplier: fixed,
        localActivityTaskSlotSupplier: fixed,
        nexusTaskSlotSupplier: fixed,
      },
    });
    const unpolled = { type: 'fixed-size', numSlots: 1 };
    expect(slots).toEqual({
      tuner: {
        activityTaskSlotSupplier: custom,
        workflowTaskSlotSupplier: unpolled,
        localActivityTaskSlotSupplier: unpolled,
        nexusTaskSlotSupplier: unpolled,
      },
    });
    expect(slots.tuner && 'activityTaskSlotSupplier' in slots.tuner && slots.tuner.activityTaskSlotSupplier).toBe(
      custom,
    );
  });

  it('follow a resource-based tuner as given', () => {
    const tuner = {
      tunerOptions: { targetMemoryUsage: 0.8, targetCpuUsage: 0.9 },
      activityTaskSlotOptions: { maximumSlots: 50 },
    };
    expect(modelCallSlotsOf({ tuner }).tuner).toBe(tuner);
  });
});

describe('activity rate limits on a worker that keeps model calls on itself', () => {
  const models = { scripted: scriptedModel([{ text: 'done' }]) };
  const base = { taskQueue: 'rate-limited' };

  it('are refused, since the calls sent back to it on its own queue would not count against them', async () => {
    for (const limit of ['maxActivitiesPerSecond', 'maxTaskQueueActivitiesPerSecond'] as const) {
      const plugin = await RelayPlugin.create({ tools: [], models });
      const refused = await plugin.configureWorker({ ...base, [limit]: 5 }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(RelayError.isInstance(refused) && refused.code).toBe('invalid_input');
      expect(String(refused)).toContain(`${limit} limits only the worker's shared task queue`);
      // The refusal closed the plugin's tools, so it configures no worker after it.
      await expect(plugin.configureWorker(base)).rejects.toThrow('tool sources are closed');
    }
  });

  it('are taken by a worker that sends every call by the shared queue', async () => {
    const plugin = await RelayPlugin.create({
      tools: [],
      models,
      keepModelCallsOnWorker: false,
      checkSearchAttributes: false,
    });
    await expect(plugin.configureWorker({ ...base, maxActivitiesPerSecond: 5 })).resolves.toMatchObject({
      maxActivitiesPerSecond: 5,
    });
  });
});

describe('the heartbeat throttle of a worker the plugin configures', () => {
  const models = { scripted: scriptedModel([{ text: 'done' }]) };
  const plugin = () => RelayPlugin.create({ tools: [], models, checkSearchAttributes: false });

  it('lets streamed model text through every 100 ms, as Worker.create with the plugin alone would not', async () => {
    const configured = await (await plugin()).configureWorker({ taskQueue: 'streaming' });
    expect(configured.maxHeartbeatThrottleInterval).toBe(modelDeltaBatchMs);
  });

  it('keeps a throttle the worker sets itself', async () => {
    const configured = await (
      await plugin()
    ).configureWorker({ taskQueue: 'streaming', maxHeartbeatThrottleInterval: 2_000 });
    expect(configured.maxHeartbeatThrottleInterval).toBe(2_000);
  });
});
