import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import proto from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { EphemeralServerExecutable } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { RelayClient } from '../client/relay-client.js';
import { dynamicConfigArgs, findTemporalExecutable } from '../dev/temporal-dev-server.js';
import { withEncryption } from '../security/with-encryption.js';
import { RelayError } from '../shared/errors.js';
import type { PendingApproval, RunEvent, RunResult, RunSnapshot } from '../shared/run-types.js';
import { relaySearchAttributes } from '../shared/search-attributes.js';
import { createWorker } from '../worker/create-worker.js';
import type { CreateWorkerOptions } from '../worker/create-worker.js';
import { findTestServerExecutable } from './find-test-server-executable.js';
import { quietenWorkerRuntime } from './quieten-worker-runtime.js';
import { relayWorkflowBundle } from './relay-workflow-bundle.js';
import { recordHistory } from './replay-histories.js';
import { waitForApproval, waitForRun } from './wait-for-run.js';
import type { AwaitedApproval, WaitOptions } from './wait-for-run.js';

/** Options of {@link createTestEnvironment}: the worker's (tools, models, …) and the server's. */
export interface TestEnvironmentOptions extends Omit<
  CreateWorkerOptions,
  'taskQueue' | 'connection' | 'address' | 'namespace' | 'checkSearchAttributes'
> {
  /**
   * `'local'`: a real Temporal dev server (`temporal server start-dev`), the whole service, in real time.
   * `'time-skipping'`: Temporal's test server, where time jumps ahead whenever every run waits for a timer, so a
   * 24-hour approval timeout passes in milliseconds; a subset of the service (docs/testing.md says which).
   * @default 'local'
   */
  mode?: 'local' | 'time-skipping';
  /**
   * The server binary to run.
   * @default local: the Temporal CLI from `TEMPORAL_CLI_PATH` or `PATH`; time-skipping: `TEMPORAL_TEST_SERVER_PATH`,
   * else the test server that `relay_e_ensure_test_server` (scripts/env.sh) caches
   */
  serverExecutable?: EphemeralServerExecutable;
  /**
   * The task queue of the worker and the client.
   * @default a fresh `relay-e-test-<uuid>`
   */
  taskQueue?: string;
}

/** A Temporal server, a Relay-E worker with the test's tools and models, and a client, for one test file. */
export interface RelayTestEnvironment {
  readonly mode: 'local' | 'time-skipping';
  /** A client on the worker's task queue; in time-skipping mode its `result()` lets time skip while it waits. */
  readonly client: RelayClient;
  /** The Temporal client underneath, for what Relay-E does not wrap (histories, describe). */
  readonly temporal: Client;
  readonly worker: Worker;
  readonly taskQueue: string;
  /** `@temporalio/testing`'s environment: its connections, `sleep` and `currentTimeMs`. */
  readonly testEnvironment: TestWorkflowEnvironment;
  /** Waits until `predicate` holds for the run's snapshot and returns that snapshot. */
  waitForRun(runId: string, predicate: (snapshot: RunSnapshot) => boolean, options?: WaitOptions): Promise<RunSnapshot>;
  /** Waits until the run awaits approval of a tool call (the given one, or its first) and returns it to decide on. */
  waitForApproval(runId: string, options?: WaitOptions & { toolCallId?: string }): Promise<AwaitedApproval>;
  /** Moves the server's clock forward (time-skipping mode only): timers due in between fire. */
  advanceTime(duration: Duration): Promise<void>;
  /**
   * Moves the clock past the call's approval deadline, so the run treats it as timed out: by the call's whole wait
   * (`expiresAt − requestedAt`) and a second more. The wait's timer runs on the server's clock from the workflow task
   * that started it, at or before the server's current time, however far that clock jumped ahead of the worker's.
   */
  advancePastApprovalTimeout(approval: Pick<PendingApproval, 'requestedAt' | 'expiresAt'>): Promise<void>;
  /** Waits for the run to complete and returns its result; a failed or cancelled run throws. */
  result(runId: string): Promise<RunResult>;
  /** Waits for the run to end, however it ends, and returns its whole event log. */
  collectEvents(runId: string): Promise<RunEvent[]>;
  /** Writes the run's history to `file` for a determinism corpus that `replayHistories` checks. */
  recordHistory(runId: string, file: string): Promise<void>;
  /** Stops the worker and the server; rethrows the worker's failure if it failed. */
  teardown(): Promise<void>;
}

/**
 * How far advancePastApprovalTimeout moves the clock beyond a call's whole wait. `expiresAt` counts from the worker's
 * clock (the input check's time), which a time-skipping server's clock leaves behind at its first jump, so the wait
 * is measured from the server's current time instead: its timer started at or before it. A wait split by a reminder
 * (`remindApproversBeforeExpiry`) starts its last part only once the worker has handled the reminder, in real time;
 * the margin covers that turn.
 */
const approvalTimeoutMarginMs = 1_000;

/** How many times a server that does not answer within the SDK's start-up deadline is started, in all. */
const serverStartAttempts = 3;

/**
 * Starts the server, again when it did not answer within the SDK's fixed start-up deadline (5 s): on a loaded CI
 * machine the test server's JVM can take longer than that to listen. Any other failure is thrown at once, and the
 * last attempt's timeout too.
 */
export async function startServerPatiently(
  start: () => Promise<TestWorkflowEnvironment>,
): Promise<TestWorkflowEnvironment> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (error) {
      const timedOut = error instanceof Error && error.message.includes('did not start within');
      if (!timedOut || attempt >= serverStartAttempts) throw error;
      console.warn(
        `Relay-E test environment: the Temporal server did not start in time; starting it again (${error.message})`,
      );
    }
  }
}

/**
 * Starts a Temporal server (a dev server, or the time-skipping test server), registers Relay-E's search attributes,
 * and runs a Relay-E worker with the given tools and models against it. Call `teardown()` when done. Worker logs
 * stay at WARN and above unless the process installed its own Temporal `Runtime` first.
 */
export async function createTestEnvironment(options: TestEnvironmentOptions): Promise<RelayTestEnvironment> {
  quietenWorkerRuntime();
  const { mode = 'local', serverExecutable, taskQueue = `relay-e-test-${randomUUID()}`, ...workerOptions } = options;
  // The converter createWorker gives the worker (its own, else the worker options'), so the client reads what it writes.
  const dataConverter = withEncryption(
    options.dataConverter ?? options.workerOptions?.dataConverter,
    options.encryption,
  );
  const clientOptions = dataConverter ? { client: { dataConverter } } : {};
  const testEnvironment = await startServerPatiently(async () =>
    mode === 'time-skipping'
      ? await TestWorkflowEnvironment.createTimeSkipping({
          server: { executable: serverExecutable ?? { type: 'existing-path', path: await findTestServerExecutable() } },
          ...clientOptions,
        })
      : await TestWorkflowEnvironment.createLocal({
          server: {
            executable: serverExecutable ?? { type: 'existing-path', path: await findTemporalExecutable() },
            searchAttributes: Object.values(relaySearchAttributes),
            extraArgs: dynamicConfigArgs({}),
          },
          ...clientOptions,
        }),
  );
  try {
    // The test server takes search attributes only through its operator service and cannot list them back.
    if (mode === 'time-skipping') await registerSearchAttributes(testEnvironment);
    const worker = await createWorker({
      ...workerOptions,
      workflowBundle:
        workerOptions.workflowBundle ??
        (shapesTheBundle(workerOptions)
          ? undefined
          : await relayWorkflowBundle({ encryption: workerOptions.encryption !== undefined })),
      taskQueue,
      connection: testEnvironment.nativeConnection,
      namespace: namespaceOf(testEnvironment),
      checkSearchAttributes: mode === 'local',
    });
    const running = worker.run();
    // A worker that fails mid-test is reported by teardown(), not as an unhandled rejection in between.
    running.catch(() => undefined);
    return environment(mode, testEnvironment, worker, running, taskQueue);
  } catch (error) {
    await testEnvironment.teardown();
    throw error;
  }
}

/**
 * Whether the worker options change what goes into the workflow bundle (workflow interceptor modules, bundler options,
 * converters loaded by path): the shared bundle would leave them out, so `createWorker` bundles for this worker.
 */
function shapesTheBundle(options: Pick<CreateWorkerOptions, 'dataConverter' | 'workerOptions'>): boolean {
  const worker = options.workerOptions;
  const converter = options.dataConverter ?? worker?.dataConverter;
  return (
    worker?.bundlerOptions !== undefined ||
    (worker?.interceptors?.workflowModules?.length ?? 0) > 0 ||
    converter?.payloadConverterPath !== undefined ||
    converter?.failureConverterPath !== undefined
  );
}

function environment(
  mode: 'local' | 'time-skipping',
  testEnvironment: TestWorkflowEnvironment,
  worker: Worker,
  running: Promise<void>,
  taskQueue: string,
): RelayTestEnvironment {
  const temporal = testEnvironment.client;
  const client = RelayClient.fromClient(temporal, { taskQueue });
  const advanceTime = async (duration: Duration) => {
    if (!testEnvironment.supportsTimeSkipping) {
      throw new RelayError('invalid_input', "advanceTime needs mode 'time-skipping'; a local server runs in real time");
    }
    await testEnvironment.sleep(duration);
  };
  let tornDown: Promise<void> | undefined;
  return {
    mode,
    client,
    temporal,
    worker,
    taskQueue,
    testEnvironment,
    waitForRun: (runId, predicate, waitOptions) => waitForRun(client, runId, predicate, waitOptions),
    waitForApproval: (runId, waitOptions) => waitForApproval(client, runId, waitOptions),
    advanceTime,
    advancePastApprovalTimeout: (approval) =>
      advanceTime(Date.parse(approval.expiresAt) - Date.parse(approval.requestedAt) + approvalTimeoutMarginMs),
    result: (runId) => client.result(runId),
    async collectEvents(runId) {
      await temporal.workflow
        .getHandle(runId)
        .result()
        .catch(() => undefined);
      return client.events(runId);
    },
    recordHistory: (runId, file) => recordHistory(temporal.workflow.getHandle(runId), file),
    teardown: () =>
      (tornDown ??= (async () => {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        try {
          await running;
        } finally {
          await testEnvironment.teardown();
        }
      })()),
  };
}

async function registerSearchAttributes(testEnvironment: TestWorkflowEnvironment): Promise<void> {
  const { IndexedValueType } = proto.temporal.api.enums.v1;
  await testEnvironment.connection.operatorService.addSearchAttributes({
    namespace: namespaceOf(testEnvironment),
    searchAttributes: Object.fromEntries(
      Object.values(relaySearchAttributes).map((key) => [key.name, IndexedValueType[`INDEXED_VALUE_TYPE_${key.type}`]]),
    ),
  });
}

function namespaceOf(testEnvironment: TestWorkflowEnvironment): string {
  return testEnvironment.namespace ?? 'default';
}
