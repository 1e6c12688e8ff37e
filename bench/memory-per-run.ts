/**
 * Worker memory per cached run. Runs parked on an approval stay in the worker's workflow cache; we park them
 * in batches and, after a full GC, read the V8 heap in use (and the process RSS): the slope of a line fitted
 * through the heap is the cost of one more cached run. Workflows run in the worker's main thread here
 * (`debugMode`), so their state is in the heap that `v8.getHeapStatistics()` reads; worker threads would hide it.
 * The same is measured for the smallest parked Temporal workflow, so the table shows what Relay-E adds over
 * Temporal's own per-workflow cost. Each variant runs in a fresh process, one after the other.
 *
 *   npm run bench:memory -- [--runs 600] [--batch 100]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { getHeapStatistics } from 'node:v8';
import { parseArgs } from 'node:util';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { Client, Connection } from '@temporalio/client';
import { z } from 'zod';
import { defineTool } from '../src/tool/define-tool.js';
import { scriptedModel } from '../src/testing/scripted-model.js';
import { startTemporalDevServer } from '../src/dev/temporal-dev-server.js';
import { benchServerOptions, describeMachine, mapWithConcurrency, slope, startBenchStack } from './lib/bench-stack.js';

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: 'memory-per-run' },
    runs: { type: 'string', default: '600' },
    batch: { type: 'string', default: '100' },
    variant: { type: 'string' },
  },
});
const totalRuns = Number(values.runs);
const batch = Number(values.batch);

interface Sample {
  runs: number;
  heapMiB: number;
  rssMiB: number;
}

function measure(runs: number): Sample {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('Run with node --expose-gc');
  gc();
  gc();
  return { runs, heapMiB: getHeapStatistics().used_heap_size / 2 ** 20, rssMiB: process.memoryUsage().rss / 2 ** 20 };
}

/** Parks runs batch by batch, sampling RSS after each batch. */
async function sampleWhileParking(park: (ids: string[]) => Promise<void>): Promise<Sample[]> {
  await park(Array.from({ length: 10 }, (_, index) => `warmup-${index}`));
  const samples = [measure(0)];
  for (let parked = 0; parked < totalRuns; parked += batch) {
    await park(Array.from({ length: batch }, (_, index) => `run-${parked + index}`));
    await new Promise((resolve) => setTimeout(resolve, 500));
    samples.push(measure(parked + batch));
  }
  return samples;
}

async function measureRelay(): Promise<Sample[]> {
  const transfer = defineTool({
    name: 'transfer_funds',
    description: 'Move money between accounts.',
    inputSchema: z.object({
      from: z.string(),
      to: z.string(),
      amount: z.number().positive(),
      memo: z.string().optional(),
    }),
    requiresApproval: true,
    execute: async (input) => ({ status: 'done', ...input }),
  });
  const stack = await startBenchStack({
    tools: [transfer],
    models: {
      scripted: scriptedModel([{ toolCalls: [{ name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 5 } }] }]),
    },
    workerOptions: { maxCachedWorkflows: totalRuns + 100, debugMode: true },
  });
  try {
    return await sampleWhileParking(async (ids) => {
      const started = await mapWithConcurrency(ids, 20, (runId) =>
        stack.client.startRun({ runId, tenantId: 'bench', model: 'scripted:x', prompt: 'pay', approvalTimeout: '1h' }),
      );
      for (const { runId } of started) {
        while ((await stack.client.getRun(runId, { tenantId: 'bench' })).status !== 'awaiting_approval') {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    });
  } finally {
    await stack.stop();
  }
}

async function measureBareTemporal(): Promise<Sample[]> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const server = await startTemporalDevServer(benchServerOptions());
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  const worker = await Worker.create({
    connection: nativeConnection,
    taskQueue: 'bare',
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('./lib/parked-workflow.ts', import.meta.url)),
      logger: new DefaultLogger('ERROR'),
    }),
    maxCachedWorkflows: totalRuns + 100,
    debugMode: true,
  });
  const running = worker.run();
  try {
    return await sampleWhileParking(async (ids) => {
      await mapWithConcurrency(ids, 20, (workflowId) =>
        client.workflow.start('parkedWorkflow', { workflowId, taskQueue: 'bare', args: [] }),
      );
      // A query answers only once the worker has run the workflow's first task, i.e. it is cached.
      await mapWithConcurrency(ids, 20, (workflowId) => client.workflow.getHandle(workflowId).query('__stack_trace'));
    });
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
    await nativeConnection.close();
    await server.stop();
  }
}

if (values.variant) {
  const samples = values.variant === 'relay' ? await measureRelay() : await measureBareTemporal();
  process.stdout.write(`${JSON.stringify(samples)}\n`);
} else {
  const variants: Record<string, { samples: Sample[]; heapKiBPerRun: number; rssKiBPerRun: number }> = {};
  for (const variant of ['bare-temporal', 'relay']) {
    const output = execFileSync(
      process.execPath,
      [
        '--expose-gc',
        '--import',
        'tsx',
        fileURLToPath(import.meta.url),
        '--variant',
        variant,
        '--runs',
        String(totalRuns),
        '--batch',
        String(batch),
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 * 2 ** 20 },
    );
    const samples = JSON.parse(output.trim().split('\n').at(-1) ?? '[]') as Sample[];
    const perRun = (megabytes: (sample: Sample) => number) =>
      slope(samples.map((sample) => ({ x: sample.runs, y: megabytes(sample) * 1024 })));
    const heapKiBPerRun = perRun((sample) => sample.heapMiB);
    const rssKiBPerRun = perRun((sample) => sample.rssMiB);
    variants[variant] = { samples, heapKiBPerRun, rssKiBPerRun };
    console.log(
      `${variant}: ${heapKiBPerRun.toFixed(0)} KiB heap, ${rssKiBPerRun.toFixed(0)} KiB RSS per cached run (${totalRuns} runs)`,
    );
  }
  mkdirSync('bench/results', { recursive: true });
  const result = {
    measure: 'worker V8 heap in use (and RSS) per cached run, runs parked on an approval, workflows in the main thread',
    machine: describeMachine(),
    totalRuns,
    batch,
    variants,
  };
  writeFileSync(`bench/results/${values.out}.json`, `${JSON.stringify(result, null, 2)}\n`);
}
