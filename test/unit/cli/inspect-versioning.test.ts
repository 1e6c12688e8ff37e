import { describe, expect, it } from 'vitest';
import { describeRun } from '../../../src/cli/inspect-command.js';
import type { RunSnapshot } from '../../../src/shared/run-types.js';

const snapshot: RunSnapshot = {
  runId: 'run_1',
  tenantId: 'acme',
  model: 'scripted:test',
  status: 'running',
  step: 1,
  maxSteps: 10,
  pendingApprovals: [],
  usage: { inputTokens: 0, outputTokens: 0 },
  startedAt: '2026-12-05T12:00:00.000Z',
  updatedAt: '2026-12-05T12:00:01.000Z',
  lastEventSeq: 0,
};

describe('relay-e inspect under Worker Versioning', () => {
  it('names the build and deployment a run is on, and its behavior', () => {
    const versioning = { deploymentName: 'agents', buildId: 'b7', behavior: 'AUTO_UPGRADE' } as const;
    expect(describeRun(snapshot, [], [], versioning)).toContain(
      '\nVersion  build b7 of Worker Deployment agents (AUTO_UPGRADE)\n',
    );
  });

  it('says nothing of a version for a run whose workers are not versioned', () => {
    expect(describeRun(snapshot, [])).not.toContain('Version');
  });
});
