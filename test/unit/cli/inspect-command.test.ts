import { describe, expect, it } from 'vitest';
import { describeRun } from '../../../src/cli/inspect-command.js';
import type { RunSnapshot } from '../../../src/shared/run-types.js';

const snapshot: RunSnapshot = {
  runId: 'run_1',
  tenantId: 'acme',
  model: 'scripted:test',
  status: 'completed',
  stopReason: 'final_answer',
  step: 2,
  maxSteps: 10,
  pendingApprovals: [],
  usage: { inputTokens: 0, outputTokens: 0 },
  startedAt: '2026-12-04T12:00:00.000Z',
  updatedAt: '2026-12-04T12:01:00.000Z',
  lastEventSeq: 0,
};

describe('relay-e inspect', () => {
  it('shows how each notice a run handed off ended, or that it has not yet', () => {
    const text = describeRun(
      snapshot,
      [],
      [
        {
          deliveredBy: 'approval-notices/exec-1',
          notices: ['run_1/call_1_0/decided', 'run_1/call_1_1/decided'],
          status: 'COMPLETED',
          outcomes: [
            { id: 'run_1/call_1_0/decided', outcome: 'delivered', status: 200, attempt: 3 },
            { id: 'run_1/call_1_1/decided', outcome: 'failed', error: 'HTTP 503', status: 503, attempt: 12 },
          ],
        },
        { deliveredBy: 'approval-notices/exec-2', notices: ['run_1/call_2_0/requested'], status: 'RUNNING' },
      ],
    );
    expect(text).toContain(
      [
        'Notices handed off to approval-notices/exec-1 (completed)',
        '  run_1/call_1_0/decided  delivered (200, attempt 3)',
        '  run_1/call_1_1/decided  given up after attempt 12: HTTP 503',
        '',
        'Notices handed off to approval-notices/exec-2 (running)',
        '  run_1/call_2_0/requested  not ended yet',
      ].join('\n'),
    );
    expect(describeRun(snapshot, [])).not.toContain('handed off');
  });
});

describe('relay-e inspect under Worker Versioning', () => {
  it('names the build and deployment a run is on, and its behavior', () => {
    const versioning = { deploymentName: 'agents', buildId: 'b7', behavior: 'AUTO_UPGRADE' } as const;
    expect(describeRun({ ...snapshot, versioning }, [])).toContain(
      '\nVersion  build b7 of Worker Deployment agents (AUTO_UPGRADE)\n',
    );
  });

  it('says nothing of a version for a run whose workers are not versioned', () => {
    expect(describeRun(snapshot, [])).not.toContain('Version');
  });
});
