import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../../src/tool/define-tool.js';
import { toCatalogEntry } from '../../../src/tool/tool-catalog.js';
import { ToolExecutor } from '../../../src/tool/tool-executor.js';
import { ToolRegistry } from '../../../src/tool/tool-registry.js';
import { maxToolInputDepth, tooDeepCheck } from '../../../src/shared/tool-input.js';
import { ToolCallValidator } from '../../../workflows/tool-call-validator.js';
import { createCheckToolCallInput } from '../../../activities/check-tool-call-input.js';

/** An object holding `levels - 1` lists, one in another: `levels` levels of JSON in all. */
function nestedLevels(levels: number): { value: unknown } {
  let value: unknown = 'x';
  for (let level = 1; level < levels; level += 1) value = [value];
  return { value };
}

const tooDeep = { path: '', code: 'input_too_deep', message: `Input is nested more than 128 levels deep` };

describe('tooDeepCheck', () => {
  it('passes an input nested as deep as an input may be, and refuses one a level deeper', () => {
    expect(maxToolInputDepth).toBe(128);
    expect(tooDeepCheck(nestedLevels(128))).toBeUndefined();
    expect(tooDeepCheck(nestedLevels(129))).toMatchObject({ success: false, issues: [tooDeep] });
  });

  it('reads arguments sent as JSON text as a check does, and leaves text that is not JSON to the check', () => {
    expect(tooDeepCheck(JSON.stringify(nestedLevels(129)))).toMatchObject({ issues: [tooDeep] });
    expect(tooDeepCheck('[[[')).toBeUndefined();
    expect(tooDeepCheck('"text"')).toBeUndefined();
  });

  it('measures a nesting far past the stack without exhausting it, and ends on an object that holds itself', () => {
    expect(tooDeepCheck(nestedLevels(1_000_000))).toMatchObject({ issues: [tooDeep] });
    const loop: Record<string, unknown> = {};
    loop['self'] = loop;
    expect(tooDeepCheck(loop)).toMatchObject({ issues: [tooDeep] });
  });

  it('counts depth, not breadth: a wide shallow input passes', () => {
    const wide = { rows: Array.from({ length: 10_000 }, (_, index) => ({ index, tags: ['a', 'b'] })) };
    expect(tooDeepCheck(wide)).toBeUndefined();
  });
});

describe('an input nested too deeply, outside a run', () => {
  const store = defineTool({
    name: 'store',
    description: 'Stores a value.',
    inputSchema: z.object({ value: z.unknown() }),
    execute: () => 'stored',
  });

  it('is refused by the executor before the tool sees it', async () => {
    const executor = new ToolExecutor(new ToolRegistry([store]));
    const result = await executor.executeCall({ id: 'c1', name: 'store', arguments: nestedLevels(129) });
    expect(result).toMatchObject({ success: false, errorType: 'validation', issues: [tooDeep] });
    expect(await executor.executeCall({ id: 'c2', name: 'store', arguments: nestedLevels(128) })).toMatchObject({
      success: true,
    });
  });

  it('is refused by the check a run asks of the worker before a human decides', async () => {
    const check = createCheckToolCallInput(new ToolRegistry([store]));
    expect(await check({ toolName: 'store', input: nestedLevels(129) })).toMatchObject({
      valid: false,
      issues: [tooDeep],
    });
    expect(await check({ toolName: 'store', input: nestedLevels(128) })).toMatchObject({ valid: true });
  });

  it("is refused by a check against the catalog unless a run's rule says it was recorded before the bound", () => {
    const catalog = [toCatalogEntry(store)];
    expect(new ToolCallValidator(catalog).check('store', nestedLevels(129))).toMatchObject({
      valid: false,
      errorType: 'validation',
      issues: [tooDeep],
    });
    let asked = 0;
    const recordedBefore = new ToolCallValidator(catalog, {
      patternsInUnicodeMode: () => true,
      inputDepthBounded: () => {
        asked += 1;
        return false;
      },
    });
    expect(recordedBefore.check('store', nestedLevels(128)).valid).toBe(true);
    expect(asked).toBe(0);
    expect(recordedBefore.check('store', nestedLevels(129)).valid).toBe(true);
    expect(asked).toBe(1);
  });
});
