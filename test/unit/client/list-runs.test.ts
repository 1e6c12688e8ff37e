import type { Client } from '@temporalio/client';
import { afterEach, describe, expect, it } from 'vitest';
import { listRuns, tenantRuns, visibilityQueryString } from '../../../src/client/list-runs.js';
import { grpcPageBudgetBytes } from '../../../src/client/visibility-pages.js';
import { fakeVisibility, messageTooLarge, rawRun } from './fake-visibility.js';
import type { ListingRequest } from './fake-visibility.js';

const clients: Client[] = [];

function visibility(...args: Parameters<typeof fakeVisibility>): Client {
  const client = fakeVisibility(...args);
  clients.push(client);
  return client;
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.connection.close()));
});

/** `count` runs, each with a memo of about `memoBytes` (a closed run whose record is at its cap: about 86 KB). */
function runs(count: number, memoBytes: number, open = false) {
  return Array.from({ length: count }, (_, index) => rawRun(index, { memoBytes, open }));
}

function ids(count: number, from = 0): string[] {
  return Array.from({ length: count }, (_, index) => `run-${from + index}`);
}

/** Every page of a listing, read with the cursor each page gives. */
async function allPages(client: Client, limit: number): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | undefined;
  do {
    const page = await listRuns(client, { tenantId: 'acme', limit, ...(cursor !== undefined ? { cursor } : {}) });
    pages.push(page.runs.map((run) => run.runId));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return pages;
}

describe('listRuns within gRPC’s message limit', () => {
  it('lists a page of closed runs larger than one gRPC message, in smaller requests, in the same order', async () => {
    const requests: ListingRequest[] = [];
    const client = visibility(runs(120, 86_000), { requests });
    const page = await listRuns(client, { tenantId: 'acme', limit: 100 });
    expect(page.runs.map((run) => run.runId)).toEqual(ids(100));
    expect(page.runs[0]).toMatchObject({ status: 'completed', model: 'scripted:test', prompt: 'prompt 0' });
    // Each request continues where the one before it ended, and asks for no more than the budget holds.
    expect(requests.map((request) => request.start)).toEqual([0, 32, 64, 96]);
    expect(requests.map((request) => request.pageSize)).toEqual([32, 32, 32, 4]);
    // The page's cursor continues after its last run.
    const next = await listRuns(client, { tenantId: 'acme', limit: 100, cursor: page.nextCursor ?? '' });
    expect(next.runs.map((run) => run.runId)).toEqual(ids(20, 100));
    expect(next.nextCursor).toBeUndefined();

    // Open runs keep no record: a listing that holds only open runs asks for a page of them at once.
    const openRequests: ListingRequest[] = [];
    const open = visibility(runs(300, 0, true), { requests: openRequests });
    expect((await listRuns(open, { tenantId: 'acme', status: 'running', limit: 100 })).runs).toHaveLength(100);
    expect(openRequests.map((request) => request.pageSize)).toEqual([100]);
  });

  it('gives the same runs in the same order at every limit', async () => {
    const client = visibility(runs(75, 86_000));
    const expected = ids(75);
    for (const limit of [1, 7, 20, 48, 60, 1_000]) {
      const pages = await allPages(client, limit);
      expect(pages.flat(), `limit ${limit}`).toEqual(expected);
      expect(pages.slice(0, -1).every((page) => page.length === limit)).toBe(true);
    }
  });

  it('asks again with half as many runs when a request comes back too large, then plans from the runs it saw', async () => {
    const requests: ListingRequest[] = [];
    // Runs of 300 KB, three times what a closed run's record is planned at.
    const client = visibility(runs(40, 300_000), { requests });
    const page = await listRuns(client, { tenantId: 'acme', limit: 40 });
    expect(page.runs.map((run) => run.runId)).toEqual(ids(40));
    expect(page.nextCursor).toBeUndefined();
    // 32 and 16 runs of 300 KB are over 4 MiB; 8 fit, and the budget would hold 10 of the runs it then saw.
    expect(Math.floor(grpcPageBudgetBytes / 300_000)).toBe(10);
    expect(requests.map((request) => [request.start, request.pageSize])).toEqual([
      [0, 32],
      [0, 16],
      [0, 8],
      [8, 8],
      [16, 8],
      [24, 8],
      [32, 8],
    ]);

    // It gives up on a request too large even with one run, and takes no server rate limit (the same gRPC status)
    // for a page too large.
    await expect(listRuns(visibility(runs(3, 5 * 1024 * 1024)), { tenantId: 'acme', limit: 3 })).rejects.toThrow(
      /larger than max/,
    );
    const throttledRequests: ListingRequest[] = [];
    const throttled = Object.assign(messageTooLarge(1), { message: '8 RESOURCE_EXHAUSTED: namespace rate limit' });
    const limited = visibility(runs(3, 0), { requests: throttledRequests, failAt: { start: 0, error: throttled } });
    await expect(listRuns(limited, { tenantId: 'acme', limit: 20 })).rejects.toBe(throttled);
    expect(throttledRequests).toHaveLength(1);
  });
});

describe('tenant ids in visibility queries', () => {
  it('quotes a tenant id as a visibility string literal: backslashes and single quotes escaped', () => {
    expect(visibilityQueryString('acme')).toBe("'acme'");
    expect(visibilityQueryString('Acme Corp')).toBe("'Acme Corp'");
    expect(visibilityQueryString(`Acme Corp's "team"`)).toBe(`'Acme Corp\\'s "team"'`);
    expect(visibilityQueryString('back\\slash')).toBe("'back\\\\slash'");
    // A backslash before a quote cannot unescape it.
    expect(visibilityQueryString("a\\' OR 'x'='x")).toBe("'a\\\\\\' OR \\'x\\'=\\'x'");
    expect(visibilityQueryString('line\nbreak, tab\t, ü, 日本')).toBe("'line\nbreak, tab\t, ü, 日本'");
  });

  it('queries a tenant by its quoted id, or by the part before a character SQL visibility cannot match', () => {
    expect(tenantRuns(`Acme Corp's team @x:1.2-3_%`)).toEqual({
      query: `WorkflowType = 'agentRun' AND RelayTenant = 'Acme Corp\\'s team @x:1.2-3_%'`,
    });
    // Temporal's SQLite and PostgreSQL visibility never match a double quote, backslash or control character.
    for (const [tenantId, prefix] of [
      [`Acme Corp's "team"`, `'Acme Corp\\'s '`],
      ['back\\slash', "'back'"],
      ['tab\there', "'tab'"],
    ] as const) {
      const { query, keep } = tenantRuns(tenantId);
      expect(query).toBe(`WorkflowType = 'agentRun' AND RelayTenant STARTS_WITH ${prefix}`);
      expect(keep).toBeTypeOf('function');
    }
    expect(tenantRuns('"quoted"').query).toBe(`WorkflowType = 'agentRun'`);
  });

  it('lists only the runs of a tenant whose id has quotes and backslashes, from the runs its query finds', async () => {
    const tenantId = `Acme Corp's "team" \\ 1`;
    // What the query finds: runs of tenants whose ids start the same way, the tenant's own every third.
    const others = [`Acme Corp's "team" \\ 1 `, `Acme Corp's \\"team\\" \\\\ 1`];
    const listed = Array.from({ length: 30 }, (_, index) =>
      rawRun(index, { tenantId: index % 3 === 0 ? tenantId : (others[(index % 3) - 1] ?? '') }),
    );
    const own = ids(30).filter((_, index) => index % 3 === 0);
    const requests: ListingRequest[] = [];
    const client = visibility(listed, { requests });
    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      const page = await listRuns(client, { tenantId, limit: 4, ...(cursor !== undefined ? { cursor } : {}) });
      pages.push(page.runs.map((run) => run.runId));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(pages).toEqual([own.slice(0, 4), own.slice(4, 8), own.slice(8)]);
    expect(requests[0]?.query).toContain(`RelayTenant STARTS_WITH 'Acme Corp\\'s '`);
    // A request that found more of the tenant's runs than the page had room for was asked again, to end at the
    // last one the page needed, so that the next page starts right after it.
    expect(requests.slice(0, 2).map((request) => [request.start, request.pageSize])).toEqual([
      [0, 32],
      [0, 10],
    ]);
  });
});
