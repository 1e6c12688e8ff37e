import { describe, expect, it, vi } from 'vitest';
import type { RunEvent } from '../../src/shared/run-types.js';
import { eventTypes } from '../helpers/relay-test-kit.js';
import { payCallId, readServerSentEvents, runEventsOf, signInToInbox, useHttpTestApi } from './http-test-kit.js';
import type { ServerSentMessage } from './http-test-kit.js';

const { tenantB, keys, api } = useHttpTestApi({ ssePollIntervalMs: 50, sseHeartbeatIntervalMs: 100 });

async function startRun(prompt: string): Promise<string> {
  const response = await api.request('/v1/runs', {
    method: 'POST',
    key: keys.alice,
    json: { model: 'scripted:test', prompt, approvalTimeout: '1h' },
  });
  return ((await response.json()) as { runId: string }).runId;
}

/** Reads the stream until `stop` holds for the events so far (then disconnects) or the server ends it. */
async function readEvents(
  path: string,
  options: { headers?: Record<string, string>; stop?: (events: RunEvent[]) => boolean; key?: string } = {},
): Promise<{ events: RunEvent[]; messages: ServerSentMessage[]; endedByServer: boolean; response: Response }> {
  const disconnect = new AbortController();
  const response = await api.request(path, {
    key: options.key ?? keys.alice,
    signal: disconnect.signal,
    ...(options.headers ? { headers: options.headers } : {}),
  });
  const messages: ServerSentMessage[] = [];
  let endedByServer = true;
  for await (const message of readServerSentEvents(response)) {
    messages.push(message);
    if (options.stop?.(runEventsOf(messages))) {
      endedByServer = false;
      disconnect.abort();
      break;
    }
  }
  return { events: runEventsOf(messages), messages, endedByServer, response };
}

/** The stream's first event (comments skipped). */
async function firstEvent(response: Response): Promise<ServerSentMessage> {
  for await (const message of readServerSentEvents(response)) {
    if (!('comment' in message)) return message;
  }
  throw new Error('The stream ended before its first event');
}

describe('GET /v1/runs/:id/events', () => {
  it('streams a run’s events, and resuming after disconnects loses and repeats none', async () => {
    const runId = await startRun('pay B');
    const path = `/v1/runs/${runId}/events`;

    const first = await readEvents(path, { stop: (events) => events.length === 2 });
    expect(first.response.headers.get('content-type')).toContain('text/event-stream');
    expect(first.endedByServer).toBe(false);
    const lastSeen = first.events.at(-1)?.seq ?? 0;

    const second = await readEvents(path, {
      headers: { 'last-event-id': String(lastSeen) },
      stop: (events) => events.some((event) => event.type === 'tool_awaiting_approval'),
    });
    expect(second.endedByServer).toBe(false);
    expect(second.events[0]?.seq).toBe(lastSeen + 1);

    const approved = await api.request(`/v1/runs/${runId}/approve`, {
      method: 'POST',
      key: keys.alice,
      json: { toolCallId: payCallId },
    });
    expect(approved.status).toBe(200);

    // A stale ?after= must lose to Last-Event-ID, as a browser reconnecting to the same URL sends both.
    const third = await readEvents(`${path}?after=0`, {
      headers: { 'last-event-id': String(second.events.at(-1)?.seq) },
    });
    expect(third.endedByServer).toBe(true);
    expect(third.events.at(-1)?.type).toBe('run_completed');

    const streamed = [...first.events, ...second.events, ...third.events];
    expect(streamed).toEqual(await api.worker.client.events(runId));
    expect(new Set(streamed.map((event) => event.seq)).size).toBe(streamed.length);
    expect(eventTypes(streamed)).toContain('tool_approved');
  });

  it('starts after ?after= and ends on its own once a finished run has nothing more to say', async () => {
    const runId = await startRun('add');
    await api.waitForRun(runId, keys.alice, (run) => run.status === 'completed');
    const all = await api.worker.client.events(runId);
    const { events, endedByServer } = await readEvents(`/v1/runs/${runId}/events?after=3`);
    expect(endedByServer).toBe(true);
    expect(events).toEqual(all.filter((event) => event.seq > 3));
    const { events: none, endedByServer: endedEmpty } = await readEvents(
      `/v1/runs/${runId}/events?after=${all.length}`,
    );
    expect([none, endedEmpty]).toEqual([[], true]);
  });

  it('sends heartbeat comments while the run waits', async () => {
    const runId = await startRun('pay B');
    await api.waitForRun(runId, keys.alice, (run) => run.status === 'awaiting_approval');
    const disconnect = new AbortController();
    const response = await api.request(`/v1/runs/${runId}/events`, { key: keys.alice, signal: disconnect.signal });
    const comments: string[] = [];
    for await (const message of readServerSentEvents(response)) {
      if ('comment' in message) comments.push(message.comment);
      if (comments.filter((comment) => comment === 'heartbeat').length >= 2) break;
    }
    disconnect.abort();
    expect(comments.filter((comment) => comment === 'heartbeat')).toHaveLength(2);
    await api.request(`/v1/runs/${runId}/cancel`, { method: 'POST', key: keys.alice });
  });

  it('refuses a Last-Event-ID that is not a sequence number with 422 naming the header', async () => {
    const runId = await startRun('add');
    const response = await api.request(`/v1/runs/${runId}/events`, {
      key: keys.alice,
      headers: { 'last-event-id': 'yesterday' },
    });
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({
      code: 'invalid_input',
      issues: [expect.objectContaining({ path: 'last-event-id' })],
    });
  });
});

describe('HEAD on an event stream', () => {
  it('answers a GET’s status and headers without joining a run’s followers', async () => {
    const runId = await startRun('pay B');
    await api.waitForRun(runId, keys.alice, (run) => run.status === 'awaiting_approval');
    const cookie = await signInToInbox(api.url, keys.alice);
    const watch = vi.spyOn(api.worker.client, 'watch');
    try {
      const streams: Array<[string, { key?: string; headers?: Record<string, string> }]> = [
        [`/v1/runs/${runId}/events`, { key: keys.alice }],
        [`/inbox/runs/${runId}/events`, { headers: { cookie } }],
      ];
      for (const [path, init] of streams) {
        const response = await api.request(path, { method: 'HEAD', ...init });
        expect(response.status, path).toBe(200);
        expect(response.headers.get('content-type'), path).toContain('text/event-stream');
        // A follower joined for a HEAD would never leave: Hono drops its body without cancelling it.
        expect(watch, path).not.toHaveBeenCalled();
      }
      const foreign = await api.request(`/v1/runs/${runId}/events`, { method: 'HEAD', key: keys.bob });
      const missing = await api.request('/v1/runs/run_never_started/events', { method: 'HEAD', key: keys.alice });
      expect([foreign.status, missing.status]).toEqual([404, 404]);
      expect(watch).not.toHaveBeenCalled();
    } finally {
      watch.mockRestore();
      await api.request(`/v1/runs/${runId}/cancel`, { method: 'POST', key: keys.alice });
    }
  });

  it('answers HEAD on the inbox’s live approvals list without reading the list', async () => {
    const cookie = await signInToInbox(api.url, keys.alice);
    const otherTenant = await signInToInbox(api.url, keys.bob);
    const listed = vi.spyOn(api.worker.client, 'listPendingApprovals');
    const left = new AbortController();
    try {
      const response = await api.request('/inbox/approvals/stream', { method: 'HEAD', headers: { cookie } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/event-stream');
      // A GET of the same stream after it anchors the reads: a stream started for the HEAD would have read alice's
      // tenant before the GET's first list (at once, or on its timer of the same interval, set earlier). The GET is
      // bob's, another tenant, so it cannot share a read of alice's tenant and hide one.
      const live = await api.request('/inbox/approvals/stream', {
        headers: { cookie: otherTenant },
        signal: left.signal,
      });
      const first = await firstEvent(live);
      expect(first).toMatchObject({ event: 'approvals' });
      const tenantsRead = listed.mock.calls.map(([options]) => options?.tenantId);
      // Bob's own read shows the count is taken; alice's tenant was never read.
      expect([...new Set(tenantsRead)]).toEqual([tenantB]);
    } finally {
      left.abort();
      listed.mockRestore();
    }
  });
});

describe('the inbox’s run timeline', () => {
  it('sends heartbeat comments at the API’s configured interval', async () => {
    const runId = await startRun('pay B');
    await api.waitForRun(runId, keys.alice, (run) => run.status === 'awaiting_approval');
    const cookie = await signInToInbox(api.url, keys.alice);
    const disconnect = new AbortController();
    // Far below the 15 s default, far above the 100 ms this API is configured with.
    const giveUp = setTimeout(() => disconnect.abort(), 3_000);
    try {
      const response = await api.request(`/inbox/runs/${runId}/events`, {
        headers: { cookie },
        signal: disconnect.signal,
      });
      let heartbeats = 0;
      for await (const message of readServerSentEvents(response)) {
        if ('comment' in message && message.comment === 'heartbeat') heartbeats += 1;
        if (heartbeats === 2) break;
      }
      expect(heartbeats).toBe(2);
    } finally {
      clearTimeout(giveUp);
      disconnect.abort();
      await api.request(`/v1/runs/${runId}/cancel`, { method: 'POST', key: keys.alice });
    }
  });
});

describe('many followers of one run', () => {
  /** Opens a follower and resolves once its stream has started, with what it reads until the server ends it. */
  async function openFollower(path: string, headers: Record<string, string> = {}, eventsOf = runEventsOf) {
    const response = await api.request(path, { key: keys.alice, headers });
    expect(response.status).toBe(200);
    const messages = readServerSentEvents(response);
    expect((await messages.next()).value).toEqual({ comment: 'connected' });
    const read = (async () => {
      const rest: ServerSentMessage[] = [];
      for await (const message of messages) rest.push(message);
      return eventsOf(rest);
    })();
    return { read };
  }

  /** The inbox's stream names no event types (the page reads every message alike): each message is an event. */
  function inboxEventsOf(messages: readonly ServerSentMessage[]): RunEvent[] {
    return messages.flatMap((message) => ('comment' in message ? [] : [JSON.parse(message.data) as RunEvent]));
  }

  it('gives every follower, early, late or resuming, exactly the events after its position, once and in order', async () => {
    const runId = await startRun('pay B');
    const path = `/v1/runs/${runId}/events`;
    const early = await Promise.all(Array.from({ length: 12 }, () => openFollower(path)));
    await api.waitForRun(runId, keys.alice, (run) => run.status === 'awaiting_approval');
    const soFar = await api.worker.client.events(runId);
    expect(soFar.length).toBeGreaterThan(3);
    // Joining once the others have read past the start: behind what the run's poller still holds.
    const late = await openFollower(path);
    const resuming = await openFollower(path, { 'last-event-id': '2' });
    const fromNow = await openFollower(`${path}?after=${soFar.length}`);

    const approved = await api.request(`/v1/runs/${runId}/approve`, {
      method: 'POST',
      key: keys.alice,
      json: { toolCallId: payCallId },
    });
    expect(approved.status).toBe(200);
    await api.waitForRun(runId, keys.alice, (run) => run.status === 'completed');
    const all = await api.worker.client.events(runId);
    expect(all.at(-1)?.type).toBe('run_completed');
    for (const follower of [...early, late]) expect(await follower.read).toEqual(all);
    expect(await resuming.read).toEqual(all.filter((event) => event.seq > 2));
    expect(await fromNow.read).toEqual(all.filter((event) => event.seq > soFar.length));
  });

  it('shares one poller of a run between its event streams and the inbox’s pages of it', async () => {
    const runId = await startRun('pay B');
    await api.waitForRun(runId, keys.alice, (run) => run.status === 'awaiting_approval');
    const cookie = await signInToInbox(api.url, keys.alice);
    const watch = vi.spyOn(api.worker.client, 'watch');
    try {
      const followers = await Promise.all([
        ...Array.from({ length: 3 }, () => openFollower(`/v1/runs/${runId}/events`)),
        ...Array.from({ length: 3 }, () => openFollower(`/inbox/runs/${runId}/events`, { cookie }, inboxEventsOf)),
      ]);
      await api.request(`/v1/runs/${runId}/cancel`, { method: 'POST', key: keys.alice });
      const reads = await Promise.all(followers.map((follower) => follower.read));
      const all = await api.worker.client.events(runId);
      expect(all.at(-1)?.type).toBe('run_cancelled');
      for (const read of reads) expect(read).toEqual(all);
      // Six followers, one poller: each inbox page used to watch the run on its own.
      expect(watch).toHaveBeenCalledTimes(1);
    } finally {
      watch.mockRestore();
    }
  });

  it('refuses another tenant’s follower of a run others follow exactly as a run that does not exist', async () => {
    const runId = await startRun('pay B');
    await api.waitForRun(runId, keys.alice, (run) => run.status === 'awaiting_approval');
    const watching = await readEvents(`/v1/runs/${runId}/events`, {
      stop: (events) => events.some((event) => event.type === 'tool_awaiting_approval'),
    });
    expect(watching.endedByServer).toBe(false);
    const follower = await openFollower(`/v1/runs/${runId}/events`);
    const foreign = await api.request(`/v1/runs/${runId}/events`, { key: keys.bob });
    const missing = await api.request('/v1/runs/run_never_started/events', { key: keys.bob });
    expect([foreign.status, missing.status]).toEqual([404, 404]);
    const [foreignBody, missingBody] = (await Promise.all([foreign.json(), missing.json()])) as Array<{
      detail: string;
    }>;
    expect({ ...foreignBody, detail: foreignBody?.detail.replace(runId, '<id>') }).toEqual({
      ...missingBody,
      detail: missingBody?.detail.replace('run_never_started', '<id>'),
    });
    await api.request(`/v1/runs/${runId}/cancel`, { method: 'POST', key: keys.alice });
    expect((await follower.read).at(-1)?.type).toBe('run_cancelled');
  });
});
