import { describe, expect, it } from 'vitest';
import { ToolRegistry } from '../../../src/tool/tool-registry.js';
import type { ToolSource } from '../../../src/tool/tool-source.js';
import { resolveToolRegistry } from '../../../src/worker/resolve-tool-registry.js';
import { buildAddTool } from '../tool/build-tools.js';

/** A source that records whether it was opened. */
function recordingSource(opened: string[]): ToolSource {
  return {
    kind: 'tool-source',
    name: 'remote',
    open: async () => {
      opened.push('remote');
      return { tools: [], close: async () => undefined };
    },
  };
}

describe('resolveToolRegistry', () => {
  it('serves a registry given whole', async () => {
    const registry = new ToolRegistry([buildAddTool()]);
    expect((await resolveToolRegistry({ registry })).registry).toBe(registry);
  });

  it('refuses both a registry and a tools list, naming both, before opening any source', async () => {
    const opened: string[] = [];
    const options = { registry: new ToolRegistry([buildAddTool()]), tools: [recordingSource(opened)] };
    await expect(resolveToolRegistry(options)).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringMatching(/`registry`.*`tools`|`tools`.*`registry`/) as unknown,
    });
    expect(opened).toEqual([]);
  });
});
