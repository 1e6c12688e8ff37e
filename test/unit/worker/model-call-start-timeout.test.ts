import { describe, expect, it } from 'vitest';
import { createMemoryPayloadStore } from '../../../src/store/memory-payload-store.js';
import { scriptedModel } from '../../../src/testing/scripted-model.js';
import { RelayPlugin } from '../../../src/worker/relay-plugin.js';

const models = { scripted: scriptedModel([{ text: 'done' }]) };

describe('modelCallStartTimeout', () => {
  it('takes a duration between 1 second and 10 minutes', async () => {
    await expect(RelayPlugin.create({ tools: [], models, modelCallStartTimeout: '30s' })).resolves.toBeInstanceOf(
      RelayPlugin,
    );
    await expect(RelayPlugin.create({ tools: [], models, modelCallStartTimeout: 600_000 })).resolves.toBeInstanceOf(
      RelayPlugin,
    );
  });

  it('refuses a wait out of bounds, or one that is no duration, as invalid input', async () => {
    for (const wait of ['500ms', '11m', 0]) {
      await expect(RelayPlugin.create({ tools: [], models, modelCallStartTimeout: wait })).rejects.toMatchObject({
        code: 'invalid_input',
        message: `modelCallStartTimeout '${wait}' must be between 1 second and 10 minutes`,
      });
    }
    await expect(RelayPlugin.create({ tools: [], models, modelCallStartTimeout: 'soon' })).rejects.toMatchObject({
      code: 'invalid_input',
      message: "modelCallStartTimeout 'soon' is not a duration (as '30s' or ms)",
    });
  });

  it('refuses a wait for a worker that keeps no model calls on itself, where it would do nothing', async () => {
    const shared = { tools: [], models, payloadStore: createMemoryPayloadStore(), modelCallStartTimeout: '30s' };
    const refused = await RelayPlugin.create(shared).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'invalid_input' });
    expect(String(refused)).toMatch(/modelCallStartTimeout applies to a worker that keeps model calls on itself/);
    await expect(RelayPlugin.create({ ...shared, keepModelCallsOnWorker: true })).resolves.toBeInstanceOf(RelayPlugin);
  });
});
