import { defineConfig } from 'vitest/config';

// The random-SIGKILL suite stalls now and then on two cores (README roadmap, "worker-crash"); until that is
// understood it runs by hand (`npm run reliability`, or RELAY_E_RANDOM_KILLS=1), not in CI, which must stay
// green. The deterministic SIGKILL test in test/workflow/worker-crash.test.ts runs everywhere.
const runRandomKills =
  process.env['RELAY_E_RELIABILITY_SIZE'] === 'large' || process.env['RELAY_E_RANDOM_KILLS'] === '1';

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
          ],
          exclude: runRandomKills ? [] : ['test/reliability/worker-crash.test.ts'],
          globalSetup: ['test/helpers/temporal-global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          maxWorkers: 2,
        },
      },
    ],
  },
});
