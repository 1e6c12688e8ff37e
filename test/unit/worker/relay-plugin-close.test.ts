import { describe, expect, it } from 'vitest';
import { createMemoryPayloadStore } from '../../../src/store/memory-payload-store.js';
import { scriptedModel } from '../../../src/testing/scripted-model.js';
import { RelayPlugin } from '../../../src/worker/relay-plugin.js';
import type { ToolSource } from '../../../src/tool/tool-source.js';
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

  it.each([
    { option: 'a maxModelResponseBytes over its bound', extra: { maxModelResponseBytes: 2_000_000 } },
    { option: 'an encryption key that is not one', extra: { encryption: { keys: { 'k-1': 'short' } } } },
  ])('leaves no tool source open when it refuses $option', async ({ extra }) => {
    const source = { opened: 0, closed: 0 };
    const counting: ToolSource = {
      kind: 'tool-source',
      name: 'counting',
      open: async () => {
        source.opened += 1;
        return { tools: [], close: async () => void (source.closed += 1) };
      },
    };
    await expect(
      RelayPlugin.create({ tools: [counting], models: { scripted: scriptedModel([]) }, ...extra }),
    ).rejects.toMatchObject({ code: 'invalid_input' });
    // No plugin came back to close them: an MCP server's process would have kept the caller's process alive.
    expect(source.closed).toBe(source.opened);
  });

  it('refuses a payload store that cannot be used, with its error, before any tool source opens', async () => {
    const source = { opened: 0 };
    const counting: ToolSource = {
      kind: 'tool-source',
      name: 'counting',
      open: async () => {
        source.opened += 1;
        return { tools: [], close: async () => {} };
      },
    };
    const refusal = new Error('password authentication failed for user "relay"');
    const payloadStore = { ...createMemoryPayloadStore(), prepare: () => Promise.reject(refusal) };

    await expect(
      RelayPlugin.create({ tools: [counting], models: { scripted: scriptedModel([]) }, payloadStore }),
    ).rejects.toBe(refusal);
    expect(source.opened).toBe(0);
  });
});
