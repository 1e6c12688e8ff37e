import { describe, expect, it } from 'vitest';
import { mergeWorkerCatalogs } from '../../../src/shared/worker-catalog.js';
import type { WorkerCatalogPublication } from '../../../src/shared/worker-catalog.js';

const tool = (name: string) => ({ name, description: name, inputSchema: { type: 'object' }, requiresApproval: false });
const leftOut = (name: string, reason = 'its JSON Schema cannot be read') => ({
  name,
  source: 'odd',
  tool: name,
  reason,
});

describe('mergeWorkerCatalogs', () => {
  it('keeps a tool one worker left out only where no worker serves it, as the latest worker describes it', () => {
    const publications: WorkerCatalogPublication[] = [
      { workerId: 'a', tools: [tool('fine')], leftOut: [leftOut('loop', 'older'), leftOut('move')], modelPrefixes: [] },
      { workerId: 'b', tools: [tool('move')], leftOut: [leftOut('loop', 'newer')], modelPrefixes: ['scripted'] },
    ];
    const merged = mergeWorkerCatalogs(publications);
    expect(merged.tools.map((entry) => entry.name)).toEqual(['fine', 'move']);
    expect(merged.leftOut).toEqual([leftOut('loop', 'newer')]);
  });

  it('says nothing of left-out tools when no worker left one out, as catalogs before them read', () => {
    const merged = mergeWorkerCatalogs([{ workerId: 'a', tools: [tool('fine')], modelPrefixes: ['scripted'] }]);
    expect(merged).toEqual({ tools: [tool('fine')], modelPrefixes: ['scripted'], workers: 1, workerIds: ['a'] });
    expect(
      Object.keys(mergeWorkerCatalogs([{ workerId: 'a', tools: [], leftOut: [], modelPrefixes: [] }])),
    ).not.toContain('leftOut');
  });
});
