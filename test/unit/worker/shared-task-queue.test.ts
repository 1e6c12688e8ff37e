import { describe, expect, it } from 'vitest';
import type { ToolCatalogEntry } from '../../../src/shared/tool-catalog.js';
import { describeSharedQueue } from '../../../src/worker/worker-catalog-publisher.js';

function tools(...names: string[]): ToolCatalogEntry[] {
  return names.map((name) => ({ name }) as ToolCatalogEntry);
}

const own = { tools: tools('look_up_order', 'refund_order'), modelPrefixes: ['scripted'] };

describe('the warning for a task queue other workers serve with other tools', () => {
  it('names the queue, the tools and models this worker lacks, and says to give each project its own taskQueue', () => {
    const shared = {
      tools: tools('look_up_order', 'refund_order', 'fs_write_file', 'fs_read_file'),
      modelPrefixes: ['openai', 'scripted'],
      workers: 2,
      workerIds: ['me', 'other'],
    };
    const message = describeSharedQueue('relay-e', 'me', shared, own) ?? '';
    expect(message).toContain("task queue 'relay-e' (1)");
    expect(message).toContain('tools fs_write_file, fs_read_file; models openai:…');
    expect(message).not.toContain('look_up_order');
    expect(message).toContain('give each project its own taskQueue');
  });

  it('counts the tools past the tenth instead of naming them all', () => {
    const many = Array.from({ length: 27 }, (_, index) => `tool_${index}`);
    const shared = { tools: tools(...many), modelPrefixes: ['scripted'], workers: 2, workerIds: ['me', 'other'] };
    expect(describeSharedQueue('relay-e', 'me', shared, own)).toContain('tool_9 and 17 more');
  });

  it('is none for workers that serve what this one serves, or for this worker alone', () => {
    const same = { ...own, workers: 3, workerIds: ['me', 'b', 'c'] };
    expect(describeSharedQueue('relay-e', 'me', same, own)).toBeUndefined();
    const alone = { tools: tools('other_tool'), modelPrefixes: ['openai'], workers: 1, workerIds: ['me'] };
    expect(describeSharedQueue('relay-e', 'me', alone, own)).toBeUndefined();
  });
});
