import { randomUUID } from 'node:crypto';
import { DefaultLogger, IllegalStateError, NativeConnection, Runtime } from '@temporalio/worker';
import type { LogEntry } from '@temporalio/worker';
import { msToTs } from '@temporalio/common/lib/time.js';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createTestEnvironment } from '../../src/testing/create-test-environment.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { useRelayTestKit, waitForWorkerCatalog } from '../helpers/relay-test-kit.js';
import { uniqueTaskQueue } from '../helpers/temporal-test-env.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';

/**
 * What the Temporal runtime of this process logs at WARN and above: what a user of `createWorker`, the plugin or the
 * test kit sees. Installed before the kit makes the runtime (it keeps one installed first).
 */
const warnings = captureRuntimeWarnings();
const kit = useRelayTestKit();
const testTools = createTestTools(createLedger());
const add = testTool('add');
const transferFunds = testTool('transfer_funds');

function testTool(name: string) {
  const found = testTools.find((tool) => tool.name === name);
  if (found === undefined) throw new Error(`No test tool ${name}`);
  return found;
}

// Each test looks at what was logged while it ran.
beforeEach(() => {
  warnings.length = 0;
});

function captureRuntimeWarnings(): LogEntry[] {
  const entries: LogEntry[] = [];
  try {
    Runtime.install({ logger: new DefaultLogger('WARN', (entry) => entries.push(entry)) });
  } catch (error) {
    if (!(error instanceof IllegalStateError)) throw error;
    // Another file of this process made the runtime first: listen to its logger instead.
    const logger = Runtime.instance().logger;
    const log = logger.log.bind(logger);
    vi.spyOn(logger, 'log').mockImplementation((level, message, meta) => {
      if (level === 'WARN' || level === 'ERROR') entries.push({ level, message, meta, timestampNanos: 0n });
      log(level, message, meta);
    });
  }
  return entries;
}

function warned(text: string): LogEntry[] {
  return warnings.filter((entry) => entry.message.includes(text));
}

describe("Relay-E's own workers at start and stop", () => {
  it('log no warning that the model-call worker (activities only, by design) polls no workflows', async () => {
    const worker = await kit.startWorker({ tools: [add], models: { scripted: scriptedModel([{ text: 'hi' }]) } });
    try {
      await waitForWorkerCatalog(worker.client);
      const { runId } = await worker.client.startRun({ tenantId: 'acme', model: 'scripted:x', prompt: 'hello' });
      await worker.client.result(runId);
    } finally {
      await worker.stop();
    }
    expect(warned('No workflows registered')).toEqual([]);
  });

  it('take back no announcement from a catalog workflow that no longer exists, without a warning', async () => {
    const worker = await kit.startWorker({ tools: [add], models: { scripted: scriptedModel([]) } });
    await waitForWorkerCatalog(worker.client);
    await kit.temporal.workflow.getHandle(`relay-e-worker-catalog:${worker.taskQueue}`).terminate();
    await worker.stop();
    expect(warned('Could not withdraw the worker catalog')).toEqual([]);
  });

  it('in the time-skipping test kit: a run, skipped time and teardown log neither warning', async () => {
    const env = await createTestEnvironment({
      mode: 'time-skipping',
      tools: [add],
      models: { scripted: scriptedModel([{ text: 'hi' }]) },
    });
    try {
      const { runId } = await env.client.startRun({ tenantId: 'acme', model: 'scripted:x', prompt: 'hello' });
      await env.result(runId);
      await env.advanceTime('10 minutes');
    } finally {
      await env.teardown();
    }
    expect(warned('Could not withdraw the worker catalog')).toEqual([]);
    expect(warned('No workflows registered')).toEqual([]);
  });
});

describe('two projects whose workers share a task queue', () => {
  it("warns once, naming the task queue and the other workers' tools and models, and what to do", async () => {
    const taskQueue = uniqueTaskQueue('shared');
    const first = await kit.startWorker({ taskQueue, tools: [add], models: { scripted: scriptedModel([]) } });
    // The SDK allows one worker per task queue on a connection: the other project's worker has its own.
    const connection = await NativeConnection.connect({ address: kit.address });
    try {
      await waitForWorkerCatalog(first.client);
      const second = await kit.startWorker({
        taskQueue,
        connection,
        tools: [transferFunds],
        models: { other: scriptedModel([]) },
      });
      try {
        // The second worker finds the first's tool and model in the catalog. The first says what it lacks when it
        // reads the catalog back after the second joined: at once if its own read-back is still under way, else at
        // its next refresh.
        const secondsWarning = () =>
          warned(`task queue '${taskQueue}'`).filter(({ message }) => /tools add/.test(message));
        await vi.waitFor(() => expect(secondsWarning()).toHaveLength(1), { timeout: 15_000 });
        const [warning] = secondsWarning();
        expect(warning?.message).toContain('scripted');
        expect(warning?.message).toContain('taskQueue');
        expect(warning?.message).not.toContain('transfer_funds');
      } finally {
        await second.stop();
      }
    } finally {
      await first.stop();
      await connection.close();
    }
    // Each worker warns once at most, and of what it lacks only.
    const warnings = warned(`task queue '${taskQueue}'`).map(({ message }) => message);
    expect(warnings.filter((message) => /tools add/.test(message))).toHaveLength(1);
    expect(warnings.filter((message) => !/tools add/.test(message))).toEqual(
      warnings.length === 2 ? [expect.stringContaining('tools transfer_funds')] : [],
    );
  });
});

describe('a namespace without Relay-E search attributes', () => {
  it('is refused with the commands that register them, on the server the worker connected to', async () => {
    const namespace = `bare-${randomUUID().slice(0, 8)}`;
    await kit.env.connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs('1 day'),
    });
    const start = () =>
      createWorker({ address: kit.address, namespace, taskQueue: uniqueTaskQueue('bare'), tools: [], models: {} });
    // A namespace just registered may take a moment to be known to every service of the server.
    await vi.waitFor(() => expect(start()).rejects.toThrow("lacks Relay-E's search attributes"), {
      timeout: 30_000,
      interval: 1_000,
    });
    await expect(start()).rejects.toThrow(
      `temporal operator search-attribute create --address ${kit.address} --namespace ${namespace} --name RelayTenant`,
    );
  });
});
