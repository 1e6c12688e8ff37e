import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
        },
      },
      {
        test: {
          name: 'temporal',
          // Workflow, replay, HTTP and end-to-end suites share one real `temporal server start-dev`.
          include: [
            'test/workflow/**/*.test.ts',
            'test/replay/**/*.test.ts',
            'test/http/**/*.test.ts',
            'test/e2e/**/*.test.ts',
            'test/reliability/**/*.test.ts',
            'test/security/**/*.test.ts',
            'test/testing/**/*.test.ts',
            'examples/**/*.test.ts',
            'test/mcp/**/*.test.ts',
            'test/package/**/*.test.ts',
          ],
          globalSetup: ['test/helpers/temporal-global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // A wait for a run to reach a point (expect.poll) is bounded by the test's timeout, not by Vitest's 1 s: on
          // a loaded machine a run takes longer than that to reach its first activity.
          expect: { poll: { timeout: 30_000 } },
          maxWorkers: 2,
        },
      },
      {
        test: {
          name: 'cluster',
          // Each file starts its own Temporal Server cluster on PostgreSQL (scripts/cluster.sh); the first start on a
          // machine builds the server (about 4 minutes) unless `bash scripts/cluster.sh build` ran before.
          include: ['test/cluster/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 600_000,
          maxWorkers: 1,
        },
      },
    ],
  },
});
