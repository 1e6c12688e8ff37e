/**
 * The catalog step before and after issue 19: from a run's start (WorkflowExecutionStarted) to its first model call
 * scheduled (ActivityTaskScheduled of callModel), read from history on the server's clock. That span holds the
 * first workflow task, the tool-catalog snapshot (a local activity) and the task that records `run_started`.
 * `after` is Relay-E's worker as shipped: the snapshot returns its own time and the first events carry it.
 * `before` is the same worker with a bench-only activity interceptor returning the results workers returned before
 * (bench/lib/legacy-event-times-interceptor.ts), so the workflow stamps them with its clock. One worker each, on
 * one dev server, runs one at a time, the two variants interleaved; the statistic is the median over all runs and
 * the median of the per-round medians, over an odd number of rounds.
 *
 *   npm run bench:catalog -- [--rounds 5] [--runs 20]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time.js';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { z } from 'zod';
import { RelayClient } from '../src/client/relay-client.js';
import { scriptedModel } from '../src/testing/scripted-model.js';
import { defineTool } from '../src/tool/define-tool.js';
import { createWorker } from '../src/worker/create-worker.js';
import { bundleRelayWorkflows } from '../src/worker/relay-workflows.js';
import { addToolDescription } from './lib/agent-script.js';
import { startBenchServer } from './lib/bench-stack.js';
import { legacyEventTimes } from './lib/legacy-event-times-interceptor.js';
import { interleave, writeResult } from './lib/measure-harness.js';
import { median, summarize } from './lib/stats.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '5' }, runs: { type: 'string', default: '20' } },
});
const rounds = Number(values.rounds);
const runs = Number(values.runs);
if (rounds % 2 === 0) throw new Error(`--rounds must be odd so the median is one round's figure, not ${rounds}`);

const variants: Record<string, ActivityInterceptorsFactory[]> = { before: [legacyEventTimes], after: [] };
const addTool = defineTool({
  name: 'add',
  description: addToolDescription,
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => ({ result: a + b }),
});

Runtime.install({ logger: new DefaultLogger('ERROR') });
const server = await startBenchServer();
const nativeConnection = await NativeConnection.connect({ address: server.address });
const connection = await Connection.connect({ address: server.address });
const temporal = new Client({ connection });
const workflowBundle = await bundleRelayWorkflows({ logger: new DefaultLogger('ERROR') });
const workers = await Promise.all(
  Object.entries(variants).map(async ([name, interceptors]) => {
    const worker = await createWorker({
      tools: [addTool],
      models: { scripted: scriptedModel([{ text: 'done' }]) },
      taskQueue: `catalog-${name}`,
      connection: nativeConnection,
      workflowBundle,
      workerOptions: { interceptors: { activity: interceptors } },
    });
    return {
      name,
      worker,
      running: worker.run(),
      client: RelayClient.fromClient(temporal, { taskQueue: `catalog-${name}` }),
    };
  }),
);

/** Start to first model call scheduled, in ms on the server's clock. */
async function startToFirstModelCall(runId: string): Promise<number> {
  const history = await temporal.workflow.getHandle(runId).fetchHistory();
  const events = history.events ?? [];
  const started = events[0]?.eventTime;
  const modelCall = events.find(
    (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel',
  );
  if (!started || !modelCall) throw new Error(`Run ${runId} has no start or no model call in its history`);
  return tsToMs(modelCall.eventTime) - tsToMs(started);
}

// Other work on the machine moves these figures more than the change does; the file records how loaded it was.
const loadAtStart = loadavg();
const samples: Record<string, number[]> = { before: [], after: [] };
const roundMedians: Record<string, number[]> = { before: [], after: [] };
try {
  // One warm-up run each: the first run of a worker pays for its workflow thread and the bundle's first load.
  for (const { client } of workers)
    await client.result((await client.startRun({ tenantId: 'bench', model: 'scripted:x', prompt: 'warm up' })).runId);
  for (let round = 0; round < rounds; round++) {
    for (const { name, client } of interleave(workers, round)) {
      const spans: number[] = [];
      for (let index = 0; index < runs; index++) {
        const { runId } = await client.startRun({ tenantId: 'bench', model: 'scripted:x', prompt: 'answer' });
        await client.result(runId);
        spans.push(await startToFirstModelCall(runId));
      }
      samples[name]?.push(...spans);
      roundMedians[name]?.push(median(spans));
    }
    console.log(`round ${round + 1}/${rounds} done`);
  }
} finally {
  for (const { worker } of workers) worker.shutdown();
  await Promise.all(workers.map(({ running }) => running));
  await connection.close();
  await nativeConnection.close();
  await server.stop();
}

const table: Record<string, unknown> = {};
for (const name of Object.keys(variants)) {
  const all = summarize(samples[name] ?? []);
  const ofRounds = median(roundMedians[name] ?? []);
  table[name] = {
    startToFirstModelCallMs: all,
    medianOfRoundMediansMs: ofRounds,
    roundMediansMs: roundMedians[name],
    samplesMs: samples[name],
  };
  console.log(
    `${name.padEnd(7)} start -> first model call p50 ${all.p50} ms (p99 ${all.p99}), median of round medians ${ofRounds} ms`,
  );
}
writeResult('catalog-step', {
  description:
    'run start -> first model call scheduled (ms, server clock), one run at a time; before = first events stamped with the workflow clock (legacy results), after = with the times the local activities recorded (issue 19)',
  rounds,
  runsPerRound: runs,
  loadAverage: { atStart: loadAtStart, atEnd: loadavg() },
  catalogStep: table,
});
