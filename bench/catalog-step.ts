/**
 * The catalog step: from a run's start (WorkflowExecutionStarted) to its first model call scheduled (ActivityTaskScheduled
 * of callModel), read from history on the server's clock. Since the rule `catalog-in-first-model-call` that span is
 * the first workflow task alone: the first model call's activity reads the catalog. The figures from before it (a
 * local activity's snapshot and the task that recorded `run_started` in the span) are kept in
 * bench/results/catalog-step-before-catalog-in-first-call.json. One worker on one dev server, one run at a time; the
 * statistic is the median over all runs and the median of the per-round medians, over an odd number of rounds.
 *
 *   npm run bench:catalog -- [--rounds 5] [--runs 20]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time.js';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { RelayClient } from '../src/client/relay-client.js';
import { scriptedModel } from '../src/testing/scripted-model.js';
import { createWorker } from '../src/worker/create-worker.js';
import { bundleRelayWorkflows } from '../src/worker/relay-workflows.js';
import { addTool } from './lib/add-tool.js';
import { startBenchServer } from './lib/bench-stack.js';
import { writeResult } from './lib/measure-harness.js';
import { median, summarize } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: 'catalog-step' },
    rounds: { type: 'string', default: '5' },
    runs: { type: 'string', default: '20' },
  },
});
const rounds = Number(values.rounds);
const runs = Number(values.runs);
if (rounds % 2 === 0) throw new Error(`--rounds must be odd so the median is one round's figure, not ${rounds}`);

Runtime.install({ logger: new DefaultLogger('ERROR') });
const server = await startBenchServer();
const nativeConnection = await NativeConnection.connect({ address: server.address });
const connection = await Connection.connect({ address: server.address });
const temporal = new Client({ connection });
const workflowBundle = await bundleRelayWorkflows({ logger: new DefaultLogger('ERROR') });
const taskQueue = 'catalog-step';
const worker = await createWorker({
  tools: [addTool],
  models: { scripted: scriptedModel([{ text: 'done' }]) },
  taskQueue,
  connection: nativeConnection,
  workflowBundle,
});
const running = worker.run();
const client = RelayClient.fromClient(temporal, { taskQueue });

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
const samples: number[] = [];
const roundMedians: number[] = [];
try {
  // One warm-up run: the first run of a worker pays for its workflow thread and the bundle's first load.
  await client.result((await client.startRun({ tenantId: 'bench', model: 'scripted:x', prompt: 'warm up' })).runId);
  for (let round = 0; round < rounds; round++) {
    const spans: number[] = [];
    for (let index = 0; index < runs; index++) {
      const { runId } = await client.startRun({ tenantId: 'bench', model: 'scripted:x', prompt: 'answer' });
      await client.result(runId);
      spans.push(await startToFirstModelCall(runId));
    }
    samples.push(...spans);
    roundMedians.push(median(spans));
    console.log(`round ${round + 1}/${rounds} done`);
  }
} finally {
  worker.shutdown();
  await running;
  await connection.close();
  await nativeConnection.close();
  await server.stop();
}

const all = summarize(samples);
const ofRounds = median(roundMedians);
console.log(`start -> first model call p50 ${all.p50} ms (p99 ${all.p99}), median of round medians ${ofRounds} ms`);
writeResult(values.out, {
  description:
    'run start -> first model call scheduled (ms, server clock), one run at a time; the first model call reads the catalog (rule catalog-in-first-model-call)',
  rounds,
  runsPerRound: runs,
  loadAverage: { atStart: loadAtStart, atEnd: loadavg() },
  catalogStep: {
    startToFirstModelCallMs: all,
    medianOfRoundMediansMs: ofRounds,
    roundMediansMs: roundMedians,
    samplesMs: samples,
  },
});
