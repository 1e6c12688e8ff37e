import { describe, expect, it } from 'vitest';
import { scriptedModel } from '../../../src/testing/scripted-model.js';
import { RelayPlugin } from '../../../src/worker/relay-plugin.js';
import { countingCloses } from '../../helpers/test-tools.js';

describe('RelayPlugin.close', () => {
  it('closes the tool sources of a plugin whose worker never ran, once however often it is called', async () => {
    const closed = { count: 0 };
    const plugin = await RelayPlugin.create({
      tools: [countingCloses(closed)],
      models: { scripted: scriptedModel([]) },
      checkSearchAttributes: false,
    });
    expect(closed.count).toBe(0);
    await plugin.close();
    await plugin.close();
    expect(closed.count).toBe(1);
  });

  it('leaves a plugin that configures no worker: its tools would fail every call', async () => {
    const plugin = await RelayPlugin.create({
      tools: [],
      models: { scripted: scriptedModel([]) },
      checkSearchAttributes: false,
    });
    await plugin.close();
    await expect(plugin.configureWorker({ taskQueue: 'after-close' })).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringContaining('tool sources are closed') as unknown,
    });
  });
});
