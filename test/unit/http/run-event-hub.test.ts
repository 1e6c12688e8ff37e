import { setTimeout } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { RelayClient, WatchOptions } from '../../../src/client/relay-client.js';
import { tellUnavailability } from '../../../src/client/watch-run.js';
import type { WorkflowTaskFailure } from '../../../src/client/workflow-task-failure.js';
import { RunEventHub } from '../../../src/http/run-event-hub.js';
import type { FollowedEvent } from '../../../src/http/run-event-hub.js';
import { RelayError } from '../../../src/shared/errors.js';
import type { RunEvent } from '../../../src/shared/run-types.js';
import { latch } from '../../helpers/latch.js';

// The hub over a client whose `watch` the test steers look by look: what one run's poller is told, and in what order
// its followers read it. The client is a stand-in for Temporal here, as in the other unit tests of the API.

type Look = RunEvent | 'unavailable' | 'available';

const unavailable = new RelayError('run_unavailable', "Run 'run_1' cannot answer right now: its last task failed");
const failure: WorkflowTaskFailure = {
  message: 'broken on purpose',
  nondeterministic: false,
  workflowCodeFailed: true,
};

function event(seq: number): RunEvent {
  return {
    type: 'tool_succeeded',
    seq,
    at: '2026-12-07T12:00:00.000Z',
    step: 1,
    toolCallId: 'c',
    toolName: 't',
    output: 1,
  };
}

interface SteeredRunOptions {
  /** Answers the history reads that say why the run cannot answer. */
  readFailure?: () => Promise<WorkflowTaskFailure | undefined>;
  /** Whether the read the first follower's stream opens with gets an answer. */
  answersFirstRead?: boolean;
  /**
   * What the reads of a later follower's gap (events the poller no longer holds) get, one each, then nothing; a
   * promise for a read that waits until it settles.
   */
  gapReads?: Array<RunEvent[] | 'unavailable' | Promise<RunEvent[]>>;
}

/** A run whose poller sees what the test pushes. */
function steeredRun({
  readFailure = async () => failure,
  answersFirstRead = true,
  gapReads = [],
}: SteeredRunOptions = {}) {
  const looks: Look[] = [];
  let wake = () => {};
  let reads = 0;
  let gapReadCount = 0;
  let watched: WatchOptions | undefined;
  const client = {
    getRun: async () => {
      if (!answersFirstRead) throw unavailable;
      return { tenantId: 'acme', lastEventSeq: 0 };
    },
    workflowTaskFailure: () => {
      reads += 1;
      return readFailure();
    },
    events: async () => {
      gapReadCount += 1;
      const read = await (gapReads.shift() ?? []);
      if (read === 'unavailable') throw unavailable;
      return read;
    },
    // Tells the hub whether the run answers as `watch` does, reading why through the client.
    watch: async function* (runId: string, options: WatchOptions): AsyncGenerator<RunEvent> {
      watched = options;
      const unavailability = tellUnavailability(runId, options, () => client.workflowTaskFailure());
      while (!options.signal?.aborted) {
        const look = looks.shift();
        if (look === undefined) await new Promise<void>((resolve) => (wake = resolve));
        else if (look === 'unavailable') unavailability.refused(unavailable);
        else if (look === 'available') unavailability.answered();
        else yield look;
      }
    },
  };
  const hub = new RunEventHub(client as unknown as RelayClient, 250);
  return {
    hub,
    push: (...next: Look[]) => {
      looks.push(...next);
      wake();
    },
    reads: () => reads,
    gapReads: () => gapReadCount,
    watched: () => watched,
  };
}

/** A follower of `run_1` as tenant `acme`, reading one followed event at a time. */
async function follower(hub: RunEventHub, stop: AbortController) {
  const events = await hub.follow('run_1', { tenantId: 'acme', after: 0, signal: stop.signal });
  return async (): Promise<FollowedEvent> => {
    const next = await events.next();
    if (next.done) throw new Error('The follower ended');
    return next.value;
  };
}

function described(followed: FollowedEvent): string {
  if (followed.type === 'run_unavailable') return `run_unavailable: ${followed.error.message}`;
  return 'seq' in followed ? `${followed.type} ${followed.seq}` : followed.type;
}

describe("a run's followers when the run cannot answer", () => {
  it('are told why once a stretch, from one read of its history, then that it answers, before what it then read', async () => {
    const run = steeredRun();
    const stop = new AbortController();
    const next = await follower(run.hub, stop);
    run.push('unavailable', 'unavailable', 'unavailable');
    expect(described(await next())).toBe(
      "run_unavailable: Run 'run_1' cannot answer: its workflow task fails on the workers (broken on purpose), and " +
        'they take it again until one completes it.',
    );
    expect(run.reads()).toBe(1);
    // Read only once the poller has taken them all: the answer comes before the events the answering look read.
    run.push('available', event(1), event(2), 'unavailable');
    await setTimeout(20);
    expect([described(await next()), described(await next()), described(await next())]).toEqual([
      'run_available',
      'tool_succeeded 1',
      'tool_succeeded 2',
    ]);
    expect(described(await next())).toMatch(/^run_unavailable: /);
    expect(run.reads()).toBe(2);
    stop.abort();
  });

  it('tell a follower who joins while the run cannot answer, and not one who joins after it answered', async () => {
    const run = steeredRun();
    const stop = new AbortController();
    const first = await follower(run.hub, stop);
    run.push('unavailable');
    expect((await first()).type).toBe('run_unavailable');
    const second = await follower(run.hub, stop);
    expect((await second()).type).toBe('run_unavailable');
    run.push('available', event(1));
    expect([described(await second()), described(await second())]).toEqual(['run_available', 'tool_succeeded 1']);
    const third = await follower(run.hub, stop);
    run.push(event(2));
    expect(described(await third())).toBe('tool_succeeded 1');
    expect(run.reads()).toBe(1);
    stop.abort();
  });

  it('tell a follower who joins behind the held events why its gap cannot be read, and read it once it can', async () => {
    const run = steeredRun({ gapReads: ['unavailable', [event(1), event(2), event(3)]] });
    const stop = new AbortController();
    const first = await follower(run.hub, stop);
    run.push(event(1), event(2), event(3));
    expect([described(await first()), described(await first()), described(await first())]).toEqual([
      'tool_succeeded 1',
      'tool_succeeded 2',
      'tool_succeeded 3',
    ]);
    run.push('unavailable');
    expect((await first()).type).toBe('run_unavailable');
    // Joins from the start, behind the held events: it waits for the run, told why, instead of failing its stream.
    const late = await follower(run.hub, stop);
    expect(described(await late())).toMatch(/^run_unavailable: Run 'run_1' cannot answer: its workflow task fails/);
    const next = late();
    // Its gap is not read again while the poller knows the run cannot answer.
    await setTimeout(2_500);
    expect(run.gapReads()).toBe(1);
    run.push('available');
    // Told as soon as its read is asked again, before the events that read gives.
    expect([described(await next), described(await late()), described(await late()), described(await late())]).toEqual([
      'run_available',
      'tool_succeeded 1',
      'tool_succeeded 2',
      'tool_succeeded 3',
    ]);
    expect(run.gapReads()).toBe(2);
    expect(run.reads()).toBe(1);
    stop.abort();
  });

  it('tell a follower whose gap read waits why the run cannot answer while it waits, then give it the gap', async () => {
    const reading = latch();
    const run = steeredRun({ gapReads: [reading.released.then(() => [event(1), event(2)])] });
    const stop = new AbortController();
    const first = await follower(run.hub, stop);
    run.push(event(1), event(2));
    expect([described(await first()), described(await first())]).toEqual(['tool_succeeded 1', 'tool_succeeded 2']);
    // Joins from the start while the run still answered: its read of the gap waits (as one waits out Temporal's
    // query timeout while a stopped worker is still listed), and the poller meanwhile finds the run cannot answer.
    const late = await follower(run.hub, stop);
    const told = late();
    await setTimeout(20);
    run.push('unavailable');
    expect(described(await told)).toMatch(/^run_unavailable: Run 'run_1' cannot answer: its workflow task fails/);
    expect(run.gapReads()).toBe(1);
    reading.release();
    expect([described(await late()), described(await late())]).toEqual(['tool_succeeded 1', 'tool_succeeded 2']);
    run.push('available');
    expect(described(await late())).toBe('run_available');
    expect(run.gapReads()).toBe(1);
    stop.abort();
  });

  it('leave out a reason read for a stretch that ended before the read did', async () => {
    const reading = latch();
    const run = steeredRun({
      readFailure: async () => {
        reading.reached();
        await reading.released;
        return failure;
      },
    });
    const stop = new AbortController();
    const next = await follower(run.hub, stop);
    run.push('unavailable');
    await reading.started;
    run.push('available', event(1));
    expect(described(await next())).toBe('tool_succeeded 1');
    reading.release();
    run.push(event(2));
    expect(described(await next())).toBe('tool_succeeded 2');
    stop.abort();
  });

  it('follow a run whose first read cannot answer, telling why from that read, rather than refuse the follower', async () => {
    const run = steeredRun({ answersFirstRead: false });
    const stop = new AbortController();
    const next = await follower(run.hub, stop);
    expect(described(await next())).toMatch(/^run_unavailable: Run 'run_1' cannot answer: its workflow task fails/);
    expect(run.reads()).toBe(1);
    // Its watch is told so, to say when its first look answers; followed from the run's first event.
    expect(run.watched()).toMatchObject({ after: 0, unavailableAtStart: unavailable });
    run.push('available', event(1));
    expect([described(await next()), described(await next())]).toEqual(['run_available', 'tool_succeeded 1']);
    stop.abort();
  });
});
