import type { WorkflowService } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { readHistory } from '../../../src/client/read-history.js';
import type { HistorySource } from '../../../src/client/read-history.js';

/** What gRPC throws for a message over its limit (the shape `isGrpcServiceError` recognises). */
function messageTooLarge(): Error {
  return Object.assign(new Error('8 RESOURCE_EXHAUSTED: Received message larger than max (4205469 vs 4194304)'), {
    code: 8,
    details: 'Received message larger than max (4205469 vs 4194304)',
    metadata: {},
  });
}

/**
 * A history of `count` events as a server would page it, refusing pages of more than `maxPerPage` events the way
 * gRPC refuses a message over its limit; it records the page sizes asked for.
 */
function historySource(options: {
  count: number;
  bytes: number;
  maxPerPage: number;
  asked: number[];
  /** Thrown for every page instead. */
  failure?: Error;
}): HistorySource {
  const { count, bytes, maxPerPage, asked, failure } = options;
  const service = {
    describeWorkflowExecution: async () => ({
      workflowExecutionInfo: { historySizeBytes: bytes, historyLength: count },
    }),
    getWorkflowExecutionHistory: async (request: { maximumPageSize: number; nextPageToken?: Uint8Array }) => {
      asked.push(request.maximumPageSize);
      if (failure) throw failure;
      const first = request.nextPageToken ? Number(new TextDecoder().decode(request.nextPageToken)) : 0;
      if (Math.min(request.maximumPageSize, count - first) > maxPerPage) throw messageTooLarge();
      const last = Math.min(count, first + request.maximumPageSize);
      const events = Array.from({ length: last - first }, (_, index) => ({ eventId: first + index + 1 }));
      return { history: { events }, nextPageToken: new TextEncoder().encode(last < count ? String(last) : '') };
    },
  };
  return { workflowService: service as unknown as WorkflowService, options: { namespace: 'default' } };
}

describe('readHistory', () => {
  it('reads a small history in pages of up to 1,000 events', async () => {
    const asked: number[] = [];
    const history = await readHistory(historySource({ count: 1_500, bytes: 100_000, maxPerPage: 1_000, asked }), 'r');
    expect(history.events?.map((event) => Number(event.eventId))).toEqual(
      Array.from({ length: 1_500 }, (_, index) => index + 1),
    );
    expect(asked).toEqual([1_000, 1_000]);
  });

  it('plans smaller pages for a history larger than a page may carry, from its size and length', async () => {
    const asked: number[] = [];
    // 40 MiB over 100 events: pages planned for events four times the average size (about 1.6 MiB).
    await readHistory(historySource({ count: 100, bytes: 40 * 1024 * 1024, maxPerPage: 100, asked }), 'r');
    expect(asked[0]).toBe(1);
  });

  it('asks again with half as many events when a page comes back too large, and loses no event', async () => {
    const asked: number[] = [];
    const history = await readHistory(historySource({ count: 30, bytes: 100, maxPerPage: 7, asked }), 'r');
    expect(history.events?.map((event) => Number(event.eventId))).toEqual(
      Array.from({ length: 30 }, (_, index) => index + 1),
    );
    expect(asked.slice(0, 5)).toEqual([1_000, 500, 250, 125, 62]);
    expect(Math.max(...asked.slice(-3))).toBeLessThanOrEqual(7);
  });

  it('gives up on a page that is too large even with one event', async () => {
    await expect(readHistory(historySource({ count: 3, bytes: 100, maxPerPage: 0, asked: [] }), 'r')).rejects.toThrow(
      /larger than max/,
    );
  });

  it('does not take a server rate limit, the same gRPC status, for a page too large', async () => {
    const asked: number[] = [];
    const throttled = Object.assign(messageTooLarge(), {
      message: '8 RESOURCE_EXHAUSTED: namespace rate limit exceeded',
    });
    const source = historySource({ count: 3, bytes: 100, maxPerPage: 3, asked, failure: throttled });
    await expect(readHistory(source, 'r')).rejects.toBe(throttled);
    expect(asked).toEqual([1_000]);
  });
});
