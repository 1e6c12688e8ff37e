/**
 * An activity interceptor for bench/catalog-step.ts: the catalog snapshot and the tool-input check return what
 * workers returned before they carried their own time (the bare catalog list, a verdict without `at`), so the
 * workflow stamps the events after them with its clock, as it did before issue 19. Bench-only: the product has no
 * switch for the old stamping.
 */
import type { ActivityInterceptorsFactory } from '@temporalio/worker';

export const legacyEventTimes: ActivityInterceptorsFactory = (context) => ({
  inbound: {
    async execute(input, next) {
      const result = await next(input);
      if (context.info.activityType === 'snapshotToolCatalog') return (result as { entries: unknown[] }).entries;
      if (context.info.activityType === 'checkToolCallInput') {
        const { at: _at, ...verdict } = result as { at: string };
        return verdict;
      }
      return result;
    },
  },
});
