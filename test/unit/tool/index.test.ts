import { describe, expect, it } from 'vitest';
import * as toolEntry from '../../../src/tool/index.js';

describe('the @relay-e/engine/tool entry point', () => {
  it('exports the tool layer and nothing internal', () => {
    expect(Object.keys(toolEntry).sort()).toEqual(
      [
        'ToolExecutor',
        'ToolRegistry',
        'createLogger',
        'createToolContext',
        'createToolRegistry',
        'defaultLogger',
        'defaultMaxResultBytes',
        'defaultToolTimeoutMs',
        'defineJsonSchemaTool',
        'defineTool',
        'isToolSource',
        'loadToolSources',
        'toCatalogEntry',
        'toJsonSchema',
        'tool',
        'truncateOutput',
      ].sort(),
    );
  });

  it('states the documented defaults', () => {
    expect(toolEntry.defaultToolTimeoutMs).toBe(60_000);
    expect(toolEntry.defaultMaxResultBytes).toBe(32_768);
  });
});
