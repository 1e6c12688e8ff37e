import { setTimeout as realSleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RelayClient } from '../../../src/client/relay-client.js';
import { createInbox } from '../../../src/http/inbox/create-inbox.js';
import type { RunEventHub } from '../../../src/http/run-event-hub.js';
import type { RunEvent } from '../../../src/shared/run-types.js';
import { readStreamUntil } from '../../helpers/read-stream.js';

const eightHoursMs = 8 * 60 * 60 * 1000;
const signedOut = 'event: signed-out\ndata: \n\n';

/** A tenant with nothing waiting, and a run that said one thing and then waits on: both streams stay open. */
function inboxWithStreams() {
  const listPendingApprovals = vi.fn(async () => ({ approvals: [], unanswered: [], hasMore: false }));
  const client = { listPendingApprovals } as unknown as RelayClient;
  const followSignals: AbortSignal[] = [];
  const followers = {
    follow: async (_runId: string, { signal }: { signal: AbortSignal }) => {
      followSignals.push(signal);
      return (async function* (): AsyncGenerator<RunEvent> {
        yield { type: 'run_started', seq: 1, at: new Date().toISOString(), step: 0 } as unknown as RunEvent;
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
      })();
    },
  } as unknown as RunEventHub;
  const app = createInbox({
    client,
    apiKeys: new Map([['key-tenant-a-0123456789', { tenantId: 'a' }]]),
    followers,
    approvalsPollIntervalMs: 5,
  });
  return { app, listPendingApprovals, followSignals };
}

/** Reads what the stream sends until it ends, or gives up after `withinMs` of real time. */
async function readToEnd(reader: ReadableStreamDefaultReader<Uint8Array>, withinMs = 2_000) {
  const decoder = new TextDecoder();
  const deadline = realSleep(withinMs).then(() => 'gave up' as const);
  let text = '';
  for (;;) {
    const next = await Promise.race([reader.read(), deadline]);
    if (next === 'gave up') return { text, ended: false };
    if (next.done) return { text, ended: true };
    text += decoder.decode(next.value, { stream: true });
  }
}

afterEach(() => {
  vi.useRealTimers();
});

describe('the inbox’s live streams', () => {
  it('end with a signed-out event when the session expires, and stop reading for the page', async () => {
    // Date and the expiry timer are faked; the list's polling sleeps in real time.
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const { app, listPendingApprovals, followSignals } = inboxWithStreams();
    const signedIn = await app.request('http://inbox.test/inbox/session', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'apiKey=key-tenant-a-0123456789',
    });
    expect(signedIn.status).toBe(303);
    const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0]!;

    const approvals = (await app.request('http://inbox.test/inbox/approvals/stream', { headers: { cookie } })).body!;
    const timeline = (await app.request('http://inbox.test/inbox/runs/r1/events', { headers: { cookie } })).body!;
    const approvalsReader = approvals.getReader();
    const timelineReader = timeline.getReader();
    expect(await readStreamUntil(approvalsReader, /event: approvals/)).toContain('"approvals":[]');
    expect(await readStreamUntil(timelineReader, /run_started/)).toContain('"seq":1');

    // A minute before the sign-in ends, both still stream.
    await vi.advanceTimersByTimeAsync(eightHoursMs - 60_000);
    expect(followSignals[0]?.aborted).toBe(false);

    await vi.advanceTimersByTimeAsync(60_000);
    const [listEnd, timelineEnd] = await Promise.all([readToEnd(approvalsReader), readToEnd(timelineReader)]);
    expect(listEnd.ended).toBe(true);
    expect(listEnd.text.endsWith(signedOut)).toBe(true);
    expect(timelineEnd.ended).toBe(true);
    expect(timelineEnd.text.endsWith(signedOut)).toBe(true);
    // The streams underneath were cancelled too: the run is no longer followed and the list no longer read.
    expect(followSignals[0]?.aborted).toBe(true);
    const reads = listPendingApprovals.mock.calls.length;
    await realSleep(50);
    expect(listPendingApprovals.mock.calls.length).toBe(reads);
  });

  it('clear the expiry timer when the page leaves first', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const { app, followSignals } = inboxWithStreams();
    const signedIn = await app.request('http://inbox.test/inbox/session', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'apiKey=key-tenant-a-0123456789',
    });
    const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    const timers = vi.getTimerCount();
    const timeline = (await app.request('http://inbox.test/inbox/runs/r1/events', { headers: { cookie } })).body!;
    const reader = timeline.getReader();
    await readStreamUntil(reader, /run_started/);
    expect(vi.getTimerCount()).toBe(timers + 1);
    await reader.cancel();
    expect(vi.getTimerCount()).toBe(timers);
    await vi.waitFor(() => expect(followSignals[0]?.aborted).toBe(true));
  });
});
