/**
 * What watching costs the worker: 100 server-sent-event followers (10 per run) of 10 runs parked on an approval,
 * through one API process, and, with `--listers N`, N approvals lists (an inbox each) polling `GET /v1/approvals`
 * every second. Counts the queries the worker answers (a workflow interceptor reports each one through a sink;
 * bench/lib/count-queries-interceptor.ts) over a fixed window once every follower is connected, checking that every
 * list named every waiting call, then approves every run and checks each follower received its run's whole event
 * log, once and in order.
 *
 *   npm run bench:watchers -- [--runs 10] [--followers 100] [--listers 0] [--seconds 10] [--label after]
 */
import { parseArgs } from 'node:util';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { bundleWorkflowCode } from '@temporalio/worker';
import { z } from 'zod';
import { RelayClient } from '../src/client/relay-client.js';
import { startApiServer } from '../src/http/start-api-server.js';
import type { RunEvent } from '../src/shared/run-types.js';
import { scriptedModel } from '../src/testing/scripted-model.js';
import { defineTool } from '../src/tool/define-tool.js';
import { createWorker } from '../src/worker/create-worker.js';
import { relaySharedWorkflowModules, relayWorkflowsPath } from '../src/worker/relay-workflows.js';
import { startBenchServer } from './lib/bench-stack.js';
import { writeResult } from './lib/measure-harness.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '10' },
    followers: { type: 'string', default: '100' },
    listers: { type: 'string', default: '0' },
    seconds: { type: 'string', default: '10' },
    label: { type: 'string', default: 'after' },
  },
});
const runCount = Number(values.runs);
const followerCount = Number(values.followers);
const listerCount = Number(values.listers);
const listIntervalMs = 1_000;
const windowSeconds = Number(values.seconds);
const pollIntervalMs = 250;
const apiKey = 'key-bench-0123456789';
const taskQueue = 'bench-watchers';

Runtime.install({ logger: new DefaultLogger('ERROR') });
const server = await startBenchServer();
const nativeConnection = await NativeConnection.connect({ address: server.address });
const answered = new Map<string, number>();
const worker = await createWorker({
  taskQueue,
  connection: nativeConnection,
  tools: [
    defineTool({
      name: 'pay',
      description: 'Pays; needs a human.',
      inputSchema: z.object({ amount: z.number() }),
      requiresApproval: true,
      execute: async ({ amount }) => ({ paid: amount }),
    }),
  ],
  models: {
    scripted: scriptedModel((call) =>
      call.step === 1 ? { toolCalls: [{ id: 'pay', name: 'pay', input: { amount: 1 } }] } : { text: 'done' },
    ),
  },
  workflowBundle: await bundleWorkflowCode({
    workflowsPath: relayWorkflowsPath(),
    preloadModules: relaySharedWorkflowModules(),
    workflowInterceptorModules: [new URL('./lib/count-queries-interceptor.ts', import.meta.url).pathname],
    logger: new DefaultLogger('ERROR'),
  }),
  workerOptions: {
    sinks: {
      queryCounter: {
        answered: {
          fn: (_info, queryName: unknown) => {
            answered.set(String(queryName), (answered.get(String(queryName)) ?? 0) + 1);
          },
          callDuringReplay: true,
        },
      },
    },
  },
});
const workerRunning = worker.run();
const client = await RelayClient.connect({ address: server.address, taskQueue });
const api = await startApiServer({
  client,
  apiKeys: new Map([[apiKey, { tenantId: 'bench' }]]),
  ssePollIntervalMs: pollIntervalMs,
});
const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };

const runIds: string[] = [];
for (let index = 0; index < runCount; index++) {
  const response = await fetch(`${api.url}/v1/runs`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ model: 'scripted:bench', prompt: `pay ${index}`, approvalTimeout: '1h' }),
  });
  runIds.push(((await response.json()) as { runId: string }).runId);
}
for (const runId of runIds) await waitFor(async () => (await client.getRun(runId)).status === 'awaiting_approval');

const disconnect = new AbortController();
const followers = Array.from({ length: followerCount }, (_, index) => follow(runIds[index % runCount] as string));
await waitFor(() => followers.every((follower) => follower.connected));
const joined = total(answered);
// Let the joins settle before the window: a follower's first read is not what watching costs per second.
await new Promise((resolve) => setTimeout(resolve, 1_000));
answered.clear();
const windowStart = performance.now();
const windowEnd = new AbortController();
const listers = Array.from({ length: listerCount }, () => pollApprovals(windowEnd.signal));
await new Promise((resolve) => setTimeout(resolve, windowSeconds * 1_000));
windowEnd.abort();
const windowMs = performance.now() - windowStart;
const inWindow = Object.fromEntries(answered);
const queriesInWindow = total(answered);
const lists = (await Promise.all(listers)).flat();

for (const runId of runIds) {
  await fetch(`${api.url}/v1/runs/${runId}/approve`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ toolCallId: 'call_1_0' }),
  });
}
const received = await Promise.all(followers.map((follower) => follower.done));
const complete = await Promise.all(
  received.map(async ({ runId, events }) => JSON.stringify(events) === JSON.stringify(await client.events(runId))),
);
disconnect.abort();

const queriesPerSecond = Math.round((queriesInWindow / windowMs) * 1_000 * 10) / 10;
const completeLists = lists.filter((callsListed) => callsListed === runCount).length;
console.log(
  `${values.label}: ${followerCount} followers of ${runCount} runs, ${listerCount} approvals lists: ` +
    `${queriesPerSecond} worker queries/s (${queriesInWindow} in ${Math.round(windowMs)} ms); every follower got ` +
    `its whole log: ${complete.every(Boolean)}; lists naming every waiting call: ${completeLists} of ${lists.length}`,
);
writeResult(`watchers-${values.label}`, {
  description:
    'Queries the worker answered per second while server-sent-event followers watch runs parked on an approval ' +
    '(and approvals lists poll GET /v1/approvals), counted in the workflow (inbound query interceptor reporting ' +
    'through a sink), over a fixed window once every follower is connected; joining costs are counted separately.',
  label: values.label,
  runs: runCount,
  followers: followerCount,
  approvalsLists: listerCount,
  approvalsListIntervalMs: listIntervalMs,
  approvalsListPolls: lists.length,
  approvalsListPollsNamingEveryCall: completeLists,
  ssePollIntervalMs: pollIntervalMs,
  windowMs: Math.round(windowMs),
  workerQueriesInWindow: queriesInWindow,
  workerQueriesByName: inWindow,
  workerQueriesPerSecond: queriesPerSecond,
  workerQueriesWhileJoining: joined,
  followersWithTheWholeLog: complete.filter(Boolean).length,
});

await api.close();
await client.close();
worker.shutdown();
await workerRunning;
await nativeConnection.close();
await server.stop();

/** One SSE follower: connected once the response started, done with every event once the server ends the stream. */
function follow(runId: string) {
  const follower = { connected: false, done: Promise.resolve({ runId, events: [] as RunEvent[] }) };
  follower.done = (async () => {
    const response = await fetch(`${api.url}/v1/runs/${runId}/events`, { headers, signal: disconnect.signal });
    follower.connected = true;
    const events: RunEvent[] = [];
    let buffer = '';
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      buffer += Buffer.from(chunk).toString('utf8');
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const data = /^data: (.*)$/m.exec(buffer.slice(0, end))?.[1];
        if (data !== undefined) events.push(JSON.parse(data) as RunEvent);
        buffer = buffer.slice(end + 2);
      }
    }
    return { runId, events };
  })();
  return follower;
}

/** One inbox's approvals list, polled every second until `stop`: how many waiting calls each poll named. */
async function pollApprovals(stop: AbortSignal): Promise<number[]> {
  const callsListed: number[] = [];
  while (!stop.aborted) {
    const response = await fetch(`${api.url}/v1/approvals`, { headers });
    const listing = (await response.json()) as { approvals: unknown[] };
    callsListed.push(listing.approvals.length);
    await new Promise((resolve) => setTimeout(resolve, listIntervalMs));
  }
  return callsListed;
}

function total(counts: ReadonlyMap<string, number>): number {
  return [...counts.values()].reduce((sum, count) => sum + count, 0);
}

async function waitFor(condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the benchmark to settle');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
