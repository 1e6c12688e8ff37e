/**
 * How often a model call misses its stored context when workers keep it in their own memory (`createWorker`'s
 * default payload store): one worker, two on one task queue with every model call on the shared queue
 * (`keepModelCallsOnWorker: false`), and two with each call after a run's first sent to the worker that stored the
 * context (the default). A call that lands on a worker other than the one that stored the run's context fails with
 * `payload_not_found`, and the run reads the clock and sends the whole context again (a `model_context_resent`
 * event). The figure is the share of model calls that could refer to a stored context (every call but a run's first)
 * and missed it: the median of an odd number of rounds with min–max, at each concurrency. The workers of a lane share
 * one process (each with its own connection); one dev server, the lanes interleaved within each round.
 *
 *   npm run bench:resends -- [--rounds 3] [--runs 20] [--steps 5] [--concurrency 1,2,10]
 */
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection } from '@temporalio/worker';
import { RelayClient } from '../src/client/relay-client.js';
import { scriptedModel } from '../src/testing/scripted-model.js';
import { createWorker } from '../src/worker/create-worker.js';
import { bundleRelayWorkflows } from '../src/worker/relay-workflows.js';
import { addTool } from './lib/add-tool.js';
import { installBenchRuntime, mapWithConcurrency, startBenchServer } from './lib/bench-stack.js';
import { numberList, writeResult } from './lib/measure-harness.js';
import { median, summarize } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: 'context-resends' },
    rounds: { type: 'string', default: '3' },
    runs: { type: 'string', default: '20' },
    steps: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '1,2,10' },
  },
});
const rounds = Number(values.rounds);
const runs = Number(values.runs);
const steps = Number(values.steps);
const levels = numberList(values.concurrency);
if (rounds % 2 === 0) throw new Error(`--rounds must be odd so the median is one round's figure, not ${rounds}`);

/** A worker's model, counting the calls it answers: both workers of a lane must take calls for a miss to be possible. */
function countingModel(served: { calls: number }) {
  return scriptedModel((request) => {
    served.calls += 1;
    return request.step <= steps
      ? { toolCalls: [{ name: 'add', input: { a: request.step, b: 1 } }] }
      : { text: 'done' };
  });
}

installBenchRuntime();
const server = await startBenchServer();
const connection = await Connection.connect({ address: server.address });
const temporal = new Client({ connection });
const workflowBundle = await bundleRelayWorkflows({ logger: new DefaultLogger('ERROR') });

/** The worker set-ups compared: how many workers, and whether model calls follow the stored context. */
const variants = [
  { name: '1-worker', workers: 1, keepModelCallsOnWorker: true },
  { name: '2-workers-shared-queue', workers: 2, keepModelCallsOnWorker: false },
  { name: '2-workers-calls-on-storing-worker', workers: 2, keepModelCallsOnWorker: true },
] as const;
type Variant = (typeof variants)[number];

/**
 * Starts the variant's workers on one task queue, each with createWorker's default store (its own memory) and its own
 * connection: the SDK allows one worker per task queue on a connection.
 */
async function startWorkers(taskQueue: string, { workers: count, keepModelCallsOnWorker }: Variant) {
  const served = Array.from({ length: count }, () => ({ calls: 0 }));
  const connections = await Promise.all(
    Array.from({ length: count }, () => NativeConnection.connect({ address: server.address })),
  );
  const workers = await Promise.all(
    connections.map((workerConnection, index) =>
      createWorker({
        tools: [addTool],
        models: { scripted: countingModel(served[index] as { calls: number }) },
        taskQueue,
        connection: workerConnection,
        workflowBundle,
        keepModelCallsOnWorker,
      }),
    ),
  );
  const running = workers.map((worker) => worker.run());
  return {
    client: RelayClient.fromClient(temporal, { taskQueue }),
    /** Model calls each worker has answered so far. */
    served: () => served.map((worker) => worker.calls),
    async stop() {
      for (const worker of workers) worker.shutdown();
      await Promise.all(running);
      await Promise.all(connections.map((workerConnection) => workerConnection.close()));
    },
  };
}

interface Lane {
  variant: Variant;
  concurrency: number;
  /** Per round: the share of calls that could refer to a stored context and missed it, in %. */
  missedPercent: number[];
  /** Per round: misses per run. */
  missesPerRun: number[];
  /** Per round: the median run's time from start to result, in ms. */
  runMs: number[];
  /** Per round: the model calls each worker answered (a resent call counts once, where it was answered). */
  callsByWorker: number[][];
}

const lanes: Lane[] = levels.flatMap((concurrency) =>
  variants.map((variant) => ({
    variant,
    concurrency,
    missedPercent: [],
    missesPerRun: [],
    runMs: [],
    callsByWorker: [],
  })),
);
const stacks = await Promise.all(variants.map((variant) => startWorkers(`resends-${variant.name}`, variant)));
try {
  for (let round = 0; round < rounds; round++) {
    for (const lane of lanes) {
      const { client, served } = stacks[variants.indexOf(lane.variant)] as Awaited<ReturnType<typeof startWorkers>>;
      const servedBefore = served();
      const counts = await mapWithConcurrency(
        Array.from({ length: runs }, (_, run) => run),
        lane.concurrency,
        async (run) => {
          // Stored contexts are content-addressed: runs with the same transcript would share theirs across workers.
          const prompt = `add, round ${round}, run ${run}`;
          const startedAt = performance.now();
          const { runId } = await client.startRun({ tenantId: 'bench', model: 'scripted:bench', prompt });
          await client.result(runId);
          const ms = performance.now() - startedAt;
          const events = await client.events(runId);
          const calls = events.filter((event) => event.type === 'model_responded').length;
          if (calls !== steps + 1) throw new Error(`Run ${runId} answered ${calls} model calls, expected ${steps + 1}`);
          return {
            ms,
            referring: calls - 1,
            missed: events.filter((event) => event.type === 'model_context_resent').length,
          };
        },
      );
      const referring = counts.reduce((sum, count) => sum + count.referring, 0);
      const missed = counts.reduce((sum, count) => sum + count.missed, 0);
      lane.missedPercent.push((100 * missed) / referring);
      lane.missesPerRun.push(missed / runs);
      const medianRunMs = median(counts.map((count) => count.ms));
      lane.runMs.push(medianRunMs);
      const callsByWorker = served().map((calls, worker) => calls - (servedBefore[worker] ?? 0));
      lane.callsByWorker.push(callsByWorker);
      console.log(
        `round ${round + 1}/${rounds}, c=${lane.concurrency}, ${lane.variant.name}: ${missed} of ${referring} calls missed, ` +
          `median run ${Math.round(medianRunMs)} ms; ` +
          `calls answered by each worker: ${callsByWorker.join(', ')}`,
      );
    }
  }
} finally {
  await Promise.all(stacks.map((stack) => stack.stop()));
  await connection.close();
  await server.stop();
}

writeResult(values.out, {
  description:
    "share of model calls (every call but a run's first) whose stored context the worker did not hold, with createWorker's default payload store (each worker its own memory): 1 worker, 2 workers with every model call on the shared task queue, 2 workers with each call after a run's first sent to the worker that stored the context",
  rounds,
  runsPerRound: runs,
  stepsPerRun: steps,
  lanes: Object.fromEntries(
    lanes.map((lane) => [
      `c${lane.concurrency}-${lane.variant.name}`,
      {
        missedPercent: summarize(lane.missedPercent),
        missesPerRun: summarize(lane.missesPerRun),
        runMs: summarize(lane.runMs),
        rounds: lane.missedPercent,
        callsByWorker: lane.callsByWorker,
      },
    ]),
  ),
});
