import { describe, expect, it } from 'vitest';
import { modelCallAffinity } from '../../../src/cli/worker-command.js';

describe("relay-e worker's model-call affinity", () => {
  it('brings model calls back to a worker whose store is its own, with the config’s start wait', () => {
    expect(modelCallAffinity(false, undefined)).toEqual({ keepModelCallsOnWorker: true });
    expect(modelCallAffinity(false, { modelCallStartTimeout: '30s' })).toEqual({
      keepModelCallsOnWorker: true,
      modelCallStartTimeout: '30s',
    });
  });

  it('keeps none on a worker whose store every worker shares, and leaves the wait out there', () => {
    expect(modelCallAffinity(true, { modelCallStartTimeout: '30s' })).toEqual({ keepModelCallsOnWorker: false });
  });
});
