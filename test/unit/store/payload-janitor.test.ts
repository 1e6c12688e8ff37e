import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { msNumberToTs } from '@temporalio/common/lib/time.js';
import proto from '@temporalio/proto';
import { afterEach, describe, expect, it } from 'vitest';
import { createFilePayloadStore } from '../../../src/store/file-payload-store.js';
import { createMemoryPayloadStore } from '../../../src/store/memory-payload-store.js';
import { startPayloadJanitor } from '../../../src/store/payload-janitor.js';
import type { PayloadJanitor, PayloadJanitorOptions } from '../../../src/store/payload-janitor.js';
import type { PayloadScope, PayloadStore } from '../../../src/store/payload-store.js';

// The pass logic against a real memory store. Temporal's side is the one raw call the janitor makes, answered from a
// table here; test/workflow/payload-janitor.test.ts runs the janitor against the real dev server.

const { WorkflowExecutionStatus: Status } = proto.temporal.api.enums.v1;
const day = 24 * 60 * 60 * 1000;
const scope = (runId: string): PayloadScope => ({ tenantId: 'acme', runId });
const text = (value: string) => new TextEncoder().encode(value);
const sha256Hex = (value: string) => createHash('sha256').update(value).digest('hex');

/** What the fake server answers for a workflow id: a status (with a close time), not found, or an error. */
type Answer = { status: number; closeTime?: Date } | 'not found' | Error | (() => Promise<Answer>);

/** A client whose raw describe answers from `answers`, recording the workflow ids it was asked about. */
function temporalAnswering(answers: Record<string, Answer>): { client: Client; described: string[] } {
  const described: string[] = [];
  const answer = async (workflowId: string, given: Answer | undefined): Promise<unknown> => {
    if (given === undefined) throw new Error(`the test gave no answer for ${workflowId}`);
    if (typeof given === 'function') return answer(workflowId, await given());
    if (given instanceof Error) throw given;
    if (given === 'not found') {
      // What the server's NOT_FOUND looks like to the SDK: a gRPC service error with code 5.
      throw Object.assign(new Error(`5 NOT_FOUND: workflow not found for ID: ${workflowId}`), {
        code: 5,
        details: `workflow not found for ID: ${workflowId}`,
        metadata: {},
      });
    }
    const closeTime = given.closeTime && msNumberToTs(given.closeTime.getTime());
    return { workflowExecutionInfo: { status: given.status, ...(closeTime ? { closeTime } : {}) } };
  };
  const client = {
    options: { namespace: 'default' },
    workflowService: {
      describeWorkflowExecution: async (request: { execution: { workflowId: string; runId?: string } }) => {
        expect(request.execution.runId, 'the latest execution is described').toBeUndefined();
        described.push(request.execution.workflowId);
        return answer(request.execution.workflowId, answers[request.execution.workflowId]);
      },
    },
  };
  return { client: client as unknown as Client, described };
}

/** A real memory store that also records every close it is told of. */
function recordingStore(options: { retentionMs?: number } = {}): {
  store: PayloadStore;
  closes: { runId: string; closedAt: Date }[];
} {
  const memory = createMemoryPayloadStore(options);
  const closes: { runId: string; closedAt: Date }[] = [];
  const store: PayloadStore = {
    ...memory,
    async markRunClosed(closed, closedAt = new Date()) {
      closes.push({ runId: closed.runId, closedAt });
      await memory.markRunClosed(closed, closedAt);
    },
  };
  return { store, closes };
}

function recordingLogger() {
  const lines: { level: 'info' | 'warn'; line: string }[] = [];
  return {
    lines,
    logger: {
      info: (line: string) => lines.push({ level: 'info', line }),
      warn: (line: string) => lines.push({ level: 'warn', line }),
    },
  };
}

/** Stores a payload for each run in turn, a millisecond apart, so the store lists them in this order. */
async function putInTurn(store: PayloadStore, runIds: readonly string[]): Promise<void> {
  for (const runId of runIds) {
    const start = Date.now();
    while (Date.now() === start) await new Promise((resolve) => setTimeout(resolve, 1));
    await store.put(scope(runId), text(runId));
  }
}

async function unclosedRunIds(store: PayloadStore): Promise<string[]> {
  return (await store.listUnclosedRuns({ limit: 100 })).map((run) => run.runId);
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => (resolve = settle));
  return { promise, resolve };
}

describe('payload janitor', () => {
  const started: PayloadJanitor[] = [];
  const start = (options: PayloadJanitorOptions) => {
    const janitor = startPayloadJanitor(options);
    started.push(janitor);
    return janitor;
  };

  afterEach(async () => {
    await Promise.all(started.splice(0).map((janitor) => janitor.stop()));
  });

  it('marks a closed run closed at its close time and a run Temporal no longer knows at now, and leaves an open one', async () => {
    const { store, closes } = recordingStore();
    await putInTurn(store, ['closed', 'open', 'gone']);
    const closeTime = new Date(Date.now() - 2 * day);
    const { client, described } = temporalAnswering({
      closed: { status: Status.WORKFLOW_EXECUTION_STATUS_COMPLETED, closeTime },
      open: { status: Status.WORKFLOW_EXECUTION_STATUS_RUNNING },
      gone: 'not found',
    });
    const { logger, lines } = recordingLogger();
    const before = Date.now();

    const report = await start({ store, client, logger }).runOnce();

    expect(report).toEqual({ checked: 3, markedClosed: 2, notFound: 1, failed: 0, swept: 0 });
    expect(described).toEqual(['closed', 'open', 'gone']);
    expect(closes.map((close) => close.runId)).toEqual(['closed', 'gone']);
    expect(closes[0]?.closedAt).toEqual(closeTime);
    expect(closes[1]?.closedAt.getTime()).toBeGreaterThanOrEqual(before);
    expect(await unclosedRunIds(store)).toEqual(['open']);
    expect(lines).toEqual([
      {
        level: 'info',
        line: 'Relay-E payload janitor: checked 3 unclosed runs, marked 2 closed (1 no longer in Temporal), swept 0 payloads',
      },
    ]);
  });

  it('counts every status but a final one as open: running, paused, continued as new and unknown ones', async () => {
    const { store, closes } = recordingStore();
    const statuses = {
      running: Status.WORKFLOW_EXECUTION_STATUS_RUNNING,
      paused: Status.WORKFLOW_EXECUTION_STATUS_PAUSED,
      continued: Status.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW,
      unspecified: Status.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED,
      unknown: 99,
    };
    for (const runId of Object.keys(statuses)) await store.put(scope(runId), text(runId));
    const answers = Object.fromEntries(
      Object.entries(statuses).map(([runId, status]) => [runId, { status, closeTime: new Date() }]),
    );
    const { logger, lines } = recordingLogger();

    const report = await start({ store, client: temporalAnswering(answers).client, logger }).runOnce();

    expect(report).toMatchObject({ checked: 5, markedClosed: 0, failed: 0 });
    expect(closes).toEqual([]);
    expect(lines).toEqual([]);
  });

  it('marks closed every final status: completed, failed, cancelled, terminated and timed out', async () => {
    const { store } = recordingStore();
    const statuses = [
      Status.WORKFLOW_EXECUTION_STATUS_COMPLETED,
      Status.WORKFLOW_EXECUTION_STATUS_FAILED,
      Status.WORKFLOW_EXECUTION_STATUS_CANCELED,
      Status.WORKFLOW_EXECUTION_STATUS_TERMINATED,
      Status.WORKFLOW_EXECUTION_STATUS_TIMED_OUT,
    ];
    for (const status of statuses) await store.put(scope(`run-${status}`), text(String(status)));
    const answers = Object.fromEntries(statuses.map((status) => [`run-${status}`, { status, closeTime: new Date() }]));

    const report = await start({
      store,
      client: temporalAnswering(answers).client,
      logger: recordingLogger().logger,
    }).runOnce();

    expect(report).toMatchObject({ checked: 5, markedClosed: 5 });
    expect(await unclosedRunIds(store)).toEqual([]);
  });

  it('never marks a run closed when describing it fails: it counts, logs one line, and checks the run again next pass', async () => {
    const { store, closes } = recordingStore();
    await putInTurn(store, ['flaky', 'closed']);
    let describeFails = true;
    const { client } = temporalAnswering({
      flaky: async () =>
        describeFails
          ? new Error('14 UNAVAILABLE: connection refused')
          : { status: Status.WORKFLOW_EXECUTION_STATUS_COMPLETED, closeTime: new Date() },
      closed: { status: Status.WORKFLOW_EXECUTION_STATUS_COMPLETED, closeTime: new Date() },
    });
    const { logger, lines } = recordingLogger();
    const janitor = start({ store, client, logger });

    expect(await janitor.runOnce()).toEqual({ checked: 2, markedClosed: 1, notFound: 0, failed: 1, swept: 0 });
    expect(closes.map((close) => close.runId)).toEqual(['closed']);
    expect(await unclosedRunIds(store)).toEqual(['flaky']);
    expect(lines).toEqual([
      {
        level: 'warn',
        line:
          'Relay-E payload janitor: checked 2 unclosed runs, marked 1 closed (0 no longer in Temporal), swept 0 ' +
          "payloads; 1 runs wait for the next pass, first run 'flaky': 14 UNAVAILABLE: connection refused",
      },
    ]);

    describeFails = false;
    expect(await janitor.runOnce()).toMatchObject({ checked: 1, markedClosed: 1, failed: 0 });
    expect(await unclosedRunIds(store)).toEqual([]);
  });

  it('sweeps after marking, with its retentionMs: a closed run loses its payload, an open run keeps its own', async () => {
    const { store } = recordingStore({ retentionMs: day });
    const closedRef = await store.put(scope('closed'), text('closed'));
    const openRef = await store.put(scope('open'), text('open'));
    const closeTime = new Date();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const { client } = temporalAnswering({
      closed: { status: Status.WORKFLOW_EXECUTION_STATUS_COMPLETED, closeTime },
      open: { status: Status.WORKFLOW_EXECUTION_STATUS_RUNNING },
    });

    const report = await start({ store, client, retentionMs: 0, logger: recordingLogger().logger }).runOnce();

    expect(report).toMatchObject({ markedClosed: 1, swept: 1 });
    await expect(store.get(scope('closed'), closedRef)).rejects.toMatchObject({ code: 'payload_not_found' });
    expect(await store.get(scope('open'), openRef)).toEqual(text('open'));
  });

  it("describes again a run that stored after it was marked closed: a reset one that is open keeps its payloads, a late activity's closes again", async () => {
    const { store, closes } = recordingStore();
    await putInTurn(store, ['reset', 'late']);
    const closeTime = new Date();
    const closed = { status: Status.WORKFLOW_EXECUTION_STATUS_COMPLETED, closeTime };
    await start({
      store,
      client: temporalAnswering({ reset: closed, late: closed }).client,
      logger: recordingLogger().logger,
    }).runOnce();
    // A Temporal reset reopens 'reset' under its id; an activity of 'late' finishes after its run closed.
    const resetRef = await store.put(scope('reset'), text('stored after the reset'));
    const lateRef = await store.put(scope('late'), text('stored after the close'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const { client, described } = temporalAnswering({
      reset: { status: Status.WORKFLOW_EXECUTION_STATUS_RUNNING },
      late: closed,
    });

    const report = await start({ store, client, retentionMs: 0, logger: recordingLogger().logger }).runOnce();

    expect(described).toEqual(['reset', 'late']);
    expect(closes.slice(2)).toEqual([{ runId: 'late', closedAt: closeTime }]);
    expect(report).toMatchObject({ checked: 2, markedClosed: 1, swept: 2 });
    expect(await store.get(scope('reset'), resetRef)).toEqual(text('stored after the reset'));
    await expect(store.get(scope('late'), lateRef)).rejects.toMatchObject({ code: 'payload_not_found' });
  });

  it('marks and sweeps the other runs of a file store when one run record is damaged, and warns naming the record', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'relay-janitor-'));
    try {
      const { lines, logger } = recordingLogger();
      const store = createFilePayloadStore({ directory, logger });
      const healthyRef = await store.put(scope('healthy'), text('healthy'));
      const damagedRef = await store.put({ tenantId: 'globex', runId: 'damaged' }, text('damaged'));
      const record = path.join(directory, sha256Hex('globex'), 'runs', sha256Hex('damaged'), 'run.json');
      await writeFile(record, '{"version": 1, "tenantId": "glo');
      await new Promise((resolve) => setTimeout(resolve, 5));
      const completed = { status: Status.WORKFLOW_EXECUTION_STATUS_COMPLETED, closeTime: new Date() };
      const { client } = temporalAnswering({ healthy: completed, damaged: completed });

      const report = await start({ store, client, retentionMs: 0, logger }).runOnce();

      expect(report).toMatchObject({ checked: 1, markedClosed: 1, swept: 1 });
      await expect(store.get(scope('healthy'), healthyRef)).rejects.toMatchObject({ code: 'payload_not_found' });
      expect(await store.get({ tenantId: 'globex', runId: 'damaged' }, damagedRef)).toEqual(text('damaged'));
      expect(lines).toContainEqual({ level: 'warn', line: expect.stringContaining(record) as unknown });
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it("takes the runs after the last pass's batch, so runs that stay open never keep newer ones from being checked", async () => {
    const { store } = recordingStore();
    await putInTurn(store, ['open-1', 'open-2', 'closed']);
    const { client, described } = temporalAnswering({
      'open-1': { status: Status.WORKFLOW_EXECUTION_STATUS_RUNNING },
      'open-2': { status: Status.WORKFLOW_EXECUTION_STATUS_RUNNING },
      closed: { status: Status.WORKFLOW_EXECUTION_STATUS_COMPLETED, closeTime: new Date() },
    });
    const janitor = start({ store, client, batchSize: 2, logger: recordingLogger().logger });

    const reports = [await janitor.runOnce(), await janitor.runOnce(), await janitor.runOnce()];

    expect(reports.map((report) => [report.checked, report.markedClosed])).toEqual([
      [2, 0],
      [1, 1],
      [2, 0],
    ]);
    expect(described).toEqual(['open-1', 'open-2', 'closed', 'open-1', 'open-2']);
  });

  it('never runs two passes at once, and stop waits for the running pass and ends the janitor', async () => {
    const { store } = recordingStore();
    await store.put(scope('slow'), text('slow'));
    const release = deferred<Answer>();
    let describing = 0;
    let mostAtOnce = 0;
    const { client } = temporalAnswering({
      slow: async () => {
        describing++;
        mostAtOnce = Math.max(mostAtOnce, describing);
        const answer = await release.promise;
        describing--;
        return answer;
      },
    });
    const janitor = start({ store, client, logger: recordingLogger().logger });

    const first = janitor.runOnce();
    const second = janitor.runOnce();
    let stopped = false;
    const stopping = janitor.stop().then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stopped).toBe(false);
    release.resolve({ status: Status.WORKFLOW_EXECUTION_STATUS_RUNNING });
    await stopping;

    expect(mostAtOnce).toBe(1);
    expect(await first).toMatchObject({ checked: 1 });
    expect(await second).toMatchObject({ checked: 1 });
    await expect(janitor.runOnce()).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it('runs a pass by itself every intervalMs, and logs a failed pass as one line', async () => {
    const { store } = recordingStore();
    await store.put(scope('closed'), text('closed'));
    const { client } = temporalAnswering({
      closed: { status: Status.WORKFLOW_EXECUTION_STATUS_COMPLETED, closeTime: new Date() },
    });
    const { logger, lines } = recordingLogger();
    let listFails = true;
    const flakyStore: PayloadStore = {
      ...store,
      listUnclosedRuns: async (query) => {
        if (listFails) throw new Error('connection reset');
        return store.listUnclosedRuns(query);
      },
    };
    start({ store: flakyStore, client, intervalMs: 20, logger });

    await expect.poll(() => lines.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(1);
    expect(lines[0]).toEqual({ level: 'warn', line: 'Relay-E payload janitor: the pass failed: connection reset' });
    listFails = false;
    await expect.poll(() => unclosedRunIds(store), { timeout: 5_000 }).toEqual([]);
  });

  it('refuses an interval, a batch size or a retention period that is not one with invalid_input', () => {
    const { store } = recordingStore();
    const { client } = temporalAnswering({});
    for (const options of [
      { intervalMs: 0 },
      { intervalMs: Number.NaN },
      { intervalMs: 2 ** 31 }, // past what a Node timer takes: it would fire at once, every time
      { batchSize: 0 },
      { batchSize: 2.5 },
      { retentionMs: -1 },
    ]) {
      expect(() => startPayloadJanitor({ store, client, ...options }), JSON.stringify(options)).toThrow(
        expect.objectContaining({ code: 'invalid_input' }),
      );
    }
  });
});
