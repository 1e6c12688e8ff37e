import { describe, expect, it } from 'vitest';
import { createActivities } from '../../../activities/index.js';
import { ModelRegistry } from '../../../src/model/model-registry.js';
import { maxAllowedModelResponseBytes } from '../../../src/shared/payload-limits.js';
import { ToolExecutor } from '../../../src/tool/tool-executor.js';
import { ToolRegistry } from '../../../src/tool/tool-registry.js';

function activitiesWith(maxModelResponseBytes: number | undefined) {
  const registry = new ToolRegistry([]);
  return () =>
    createActivities({
      registry,
      executor: new ToolExecutor(registry),
      models: new ModelRegistry({}),
      ...(maxModelResponseBytes !== undefined ? { maxModelResponseBytes } : {}),
    });
}

describe('the model response limit', () => {
  it('takes the default and any limit up to the largest a run can carry on to its next model call', () => {
    expect(activitiesWith(undefined)).not.toThrow();
    expect(activitiesWith(maxAllowedModelResponseBytes)).not.toThrow();
  });

  it('refuses a limit over that, or one that is not a positive whole number, when the worker is made', () => {
    for (const limit of [maxAllowedModelResponseBytes + 1, 0, 1.5, 10_000_000]) {
      expect(activitiesWith(limit)).toThrow(expect.objectContaining({ code: 'invalid_input' }));
    }
  });
});
