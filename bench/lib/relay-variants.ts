/**
 * The variants that live in this package, each served in its own process by a benchmark
 * (`node --import tsx bench/lib/relay-variants.ts --variant relay --address host:port`):
 * `relay` (a Relay-E worker), `in-process` (the same loop without Temporal), `bare-temporal` (the floor) and
 * `bare-temporal-bookkeeping` (the floor with the server-side bookkeeping of a Relay-E run; `-no-marker` and
 * `-start-only` leave parts of it out).
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { WorkerOptions } from '@temporalio/worker';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { ToolExecutor } from '../../src/tool/tool-executor.js';
import { ToolRegistry } from '../../src/tool/tool-registry.js';
import type { ToolResult } from '../../src/shared/tool-result.js';
import { relaySearchAttributes } from '../../src/shared/search-attributes.js';
import type { TranscriptMessage } from '../../src/shared/transcript.js';
import { ToolCallValidator } from '../../workflows/tool-call-validator.js';
import { addTool, addWithApprovalTool } from './add-tool.js';
import { agentPrompt, agentTurn, stepsInPrompt } from './agent-script.js';
import { bareAgentActivities } from './bare-agent-activities.js';
import { approveUpdate, awaitingApprovalQuery } from './bare-agent.js';
import type { bareAgent } from './bare-agent.js';
import type { BookkeepingParts, bareAgentWithBookkeeping } from './bare-agent-bookkeeping.js';
import { installBenchRuntime, mapWithConcurrency, startBenchStack } from './bench-stack.js';
import { serveVariant } from './variant-protocol.js';
import type { ApprovalSample, ApproveAnswer, RunAnswer, VariantCommand } from './variant-protocol.js';

/** Worker options a benchmark may set for the Relay-E variant, as JSON on the command line. */
export type RelayWorkerOptions = Partial<
  Pick<WorkerOptions, 'maxCachedWorkflows' | 'maxConcurrentWorkflowTaskExecutions'>
>;

const { values } = parseArgs({
  options: {
    variant: { type: 'string' },
    address: { type: 'string' },
    'worker-options': { type: 'string', default: '{}' },
    'metrics-address': { type: 'string' },
  },
});

// stdout carries the protocol; anything a library prints goes to stderr.
console.log = console.error;

const approvalPrefix = 'approve: ';

/** The same zero-latency turns as every variant, read from the run's prompt. */
const model = scriptedModel((request) => {
  const first = request.messages[0];
  const prompt = first && first.role === 'user' ? first.content : '';
  const turn = agentTurn(request.step, stepsInPrompt(prompt));
  if ('text' in turn) return { text: turn.text };
  return {
    toolCalls: [{ name: prompt.startsWith(approvalPrefix) ? 'add_with_approval' : 'add', input: turn.toolCall }],
  };
});

async function timeRuns(
  command: { runs: number; concurrency: number },
  runOne: (index: number) => Promise<string | undefined>,
): Promise<RunAnswer> {
  const runMs: number[] = [];
  const ids: string[] = [];
  const started = performance.now();
  await mapWithConcurrency(
    Array.from({ length: command.runs }, (_, index) => index),
    command.concurrency,
    async (index) => {
      const t0 = performance.now();
      const id = await runOne(index);
      runMs.push(performance.now() - t0);
      if (id !== undefined) ids.push(id);
    },
  );
  return { ids, wallMs: performance.now() - started, runMs };
}

let runCounter = 0;
function nextRunId(prefix: string): string {
  return `${prefix}-${process.pid}-${++runCounter}`;
}

/** Serves Relay-E, as the variant `name` sets it up: its own task queue, and its run ids named after it. */
async function serveRelay(address: string, name: string, { keepModelCallsOnWorker = true } = {}): Promise<void> {
  const workerOptions = JSON.parse(values['worker-options'] ?? '{}') as RelayWorkerOptions;
  const stack = await startBenchStack({
    tools: [addTool, addWithApprovalTool],
    models: { scripted: model },
    serverAddress: address,
    taskQueue: `bench-${name}`,
    keepModelCallsOnWorker,
    workerOptions,
    ...(values['metrics-address'] ? { metricsAddress: values['metrics-address'] } : {}),
  });
  const { client } = stack;
  await serveVariant(async (command) => {
    if (command.type === 'run') {
      return timeRuns(command, async () => {
        const { runId } = await client.startRun({
          runId: nextRunId(name),
          tenantId: 'bench',
          model: 'scripted:bench',
          prompt: agentPrompt(command.steps),
          maxSteps: command.steps + 1,
        });
        await client.result(runId);
        return runId;
      });
    }
    const samples: ApprovalSample[] = [];
    for (let index = 0; index < command.runs; index++) {
      const { runId } = await client.startRun({
        runId: nextRunId('relay-approval'),
        tenantId: 'bench',
        model: 'scripted:bench',
        prompt: approvalPrefix + agentPrompt(1),
        maxSteps: 2,
      });
      let snapshot = await client.getRun(runId);
      while (snapshot.status !== 'awaiting_approval') {
        await new Promise((resolve) => setTimeout(resolve, 5));
        snapshot = await client.getRun(runId);
      }
      const toolCallId = snapshot.pendingApprovals[0]?.toolCallId ?? '';
      const sentAtMs = Date.now();
      await client.approve(runId, toolCallId, { approver: 'bench' });
      samples.push({ id: runId, sentAtMs, returnedAtMs: Date.now() });
      await client.result(runId);
    }
    return { samples } satisfies ApproveAnswer;
  });
  await stack.stop();
}

async function serveInProcess(): Promise<void> {
  const registry = new ToolRegistry([addTool]);
  const executor = new ToolExecutor(registry);
  const catalog = registry.catalog();
  const validator = new ToolCallValidator(catalog);
  const tools = catalog.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));
  const signal = new AbortController().signal;
  await serveVariant(async (command: VariantCommand) => {
    if (command.type !== 'run') throw new Error('The in-process loop has no approvals to measure');
    const stepMs: number[] = [];
    const answer = await timeRuns(command, async () => {
      const runId = nextRunId('in-process');
      const transcript: TranscriptMessage[] = [{ role: 'user', content: agentPrompt(command.steps) }];
      for (let step = 1; ; step++) {
        const t0 = performance.now();
        const request = { model: 'scripted:bench', messages: transcript, tools, step, runId, tenantId: 'bench' };
        const response = await model.generate({ ...request, modelName: 'bench' }, { signal });
        const call = response.toolCalls?.[0];
        if (!call) return undefined;
        const id = `call_${step}_0`;
        transcript.push({ role: 'assistant', content: '', toolCalls: [{ id, name: call.name, input: call.input }] });
        const check = validator.check(call.name, call.input);
        const result: ToolResult = check.valid
          ? await executor.executeCall(
              { id, name: call.name, arguments: check.input },
              { signal, context: { tenantId: 'bench', runId, toolCallId: id, idempotencyKey: `${runId}/${id}` } },
            )
          : { success: false, toolName: call.name, toolCallId: id, error: check.error, errorType: check.errorType };
        transcript.push({ role: 'tool', toolCallId: id, toolName: call.name, result });
        stepMs.push(performance.now() - t0);
      }
    });
    return { ...answer, stepMs };
  });
}

/** A worker of the floor's activities and the workflows of `workflowsFile` (in this folder), with a client. */
async function startBareWorker(address: string, taskQueue: string, workflowsFile: string) {
  installBenchRuntime(values['metrics-address']);
  const nativeConnection = await NativeConnection.connect({ address });
  const connection = await Connection.connect({ address });
  const worker = await Worker.create({
    connection: nativeConnection,
    taskQueue,
    workflowsPath: fileURLToPath(new URL(workflowsFile, import.meta.url)),
    activities: bareAgentActivities,
  });
  const running = worker.run();
  return {
    client: new Client({ connection }),
    stop: async () => {
      worker.shutdown();
      await running;
      await connection.close();
      await nativeConnection.close();
    },
  };
}

async function serveBareTemporal(address: string): Promise<void> {
  const taskQueue = 'bench-bare';
  const { client, stop } = await startBareWorker(address, taskQueue, './bare-agent.ts');
  await serveVariant(async (command) => {
    if (command.type === 'run') {
      return timeRuns(command, async () => {
        const workflowId = nextRunId('bare');
        await client.workflow.execute<typeof bareAgent>('bareAgent', {
          workflowId,
          taskQueue,
          args: [command.steps, false],
        });
        return workflowId;
      });
    }
    const samples: ApprovalSample[] = [];
    for (let index = 0; index < command.runs; index++) {
      const handle = await client.workflow.start<typeof bareAgent>('bareAgent', {
        workflowId: nextRunId('bare-approval'),
        taskQueue,
        args: [1, true],
      });
      while (!(await handle.query(awaitingApprovalQuery))) await new Promise((resolve) => setTimeout(resolve, 5));
      const sentAtMs = Date.now();
      await handle.executeUpdate(approveUpdate);
      samples.push({ id: handle.workflowId, sentAtMs, returnedAtMs: Date.now() });
      await handle.result();
    }
    return { samples } satisfies ApproveAnswer;
  });
  await stop();
}

/**
 * The floor with Relay-E's bookkeeping on the server (bare-agent-bookkeeping.ts), started as Relay-E starts a run;
 * `parts` leaves some of it out.
 */
async function serveBareWithBookkeeping(address: string, name: string, parts: BookkeepingParts): Promise<void> {
  const taskQueue = `bench-${name}`;
  const { client, stop } = await startBareWorker(address, taskQueue, './bare-agent-bookkeeping.ts');
  await serveVariant(async (command) => {
    if (command.type !== 'run') throw new Error(`${name} measures runs, not approvals`);
    return timeRuns(command, async () => {
      const workflowId = nextRunId('bare-bookkeeping');
      const prompt = agentPrompt(command.steps);
      await client.workflow.execute<typeof bareAgentWithBookkeeping>('bareAgentWithBookkeeping', {
        workflowId,
        taskQueue,
        args: [command.steps, parts],
        memo: { model: 'scripted:bench', prompt },
        typedSearchAttributes: [
          { key: relaySearchAttributes.tenant, value: 'bench' },
          { key: relaySearchAttributes.status, value: 'running' },
          { key: relaySearchAttributes.pendingApprovals, value: 0 },
        ],
        staticSummary: `scripted:bench: ${prompt}`,
        staticDetails: prompt,
      });
      return workflowId;
    });
  });
  await stop();
}

const address = values.address ?? '';
if (values.variant === 'relay') await serveRelay(address, 'relay');
else if (values.variant === 'relay-shared-queue')
  await serveRelay(address, 'relay-shared-queue', { keepModelCallsOnWorker: false });
else if (values.variant === 'in-process') await serveInProcess();
else if (values.variant === 'bare-temporal') await serveBareTemporal(address);
else if (values.variant === 'bare-temporal-bookkeeping')
  await serveBareWithBookkeeping(address, values.variant, { marker: true, closing: true });
else if (values.variant === 'bare-temporal-bookkeeping-no-marker')
  await serveBareWithBookkeeping(address, values.variant, { marker: false, closing: true });
else if (values.variant === 'bare-temporal-bookkeeping-start-only')
  await serveBareWithBookkeeping(address, values.variant, { marker: false, closing: false });
else throw new Error(`Unknown variant '${values.variant ?? ''}'`);
