import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { askWhileWorkersPoll, noWorkerPolling } from '../../src/client/ask-while-workers-poll.js';
import { RelayClient } from '../../src/client/relay-client.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { defineTool } from '../../src/tool/define-tool.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { bundleRelayWorkflows } from '../../src/worker/relay-workflows.js';
import { waitForRun } from '../helpers/relay-test-kit.js';
import { startTemporalCluster } from '../helpers/temporal-cluster.js';
import { autoUpgrade, makeCurrentVersion, versioningOf } from '../helpers/worker-deployments.js';
import { versionedWorkerOptions } from '../../src/cli/worker-deployment.js';
import type { TemporalCluster } from '../helpers/temporal-cluster.js';
import { quietenWorkerRuntime } from '../../src/testing/quieten-worker-runtime.js';

// Production topology, smallest size: PostgreSQL and two Temporal Server nodes from scripts/cluster.sh, one
// Relay-E worker, and a client on each node's frontend.
const taskQueue = `cluster-smoke-${randomUUID()}`;
const payments: Array<{ to: string; amount: number }> = [];
let cluster: TemporalCluster;
let workerConnection: NativeConnection;
let stopWorker: () => Promise<void>;
let clients: RelayClient[];
let workflowBundle: Awaited<ReturnType<typeof bundleRelayWorkflows>>;

const payTool = defineTool({
  name: 'pay',
  description: 'Pay an amount to an account.',
  inputSchema: z.object({ to: z.string(), amount: z.number() }),
  requiresApproval: true,
  execute: async (input) => {
    payments.push(input);
    return { paid: true };
  },
});

const model = scriptedModel((request) =>
  request.step === 1
    ? { toolCalls: [{ id: 'pay_1', name: 'pay', input: { to: request.runId, amount: 5 } }] }
    : { text: 'done' },
);

/** A question to run `runId` on `queue` that takes 2.5 s to answer, as a query to a busy worker may. */
function slowQuestion(client: RelayClient, runId: string, queue: string) {
  const answer = () => sleep(2_500).then(() => 'answered');
  return askWhileWorkersPoll(client, { taskQueue: queue, runId, probe: true }, answer, () =>
    noWorkerPolling(runId, queue),
  );
}

beforeAll(async () => {
  quietenWorkerRuntime();
  cluster = await startTemporalCluster();
  workerConnection = await NativeConnection.connect({ address: cluster.addresses[0] ?? '' });
  workflowBundle = await bundleRelayWorkflows({ logger: new DefaultLogger('WARN') });
  const worker = await createWorker({
    tools: [payTool],
    models: { scripted: model },
    taskQueue,
    connection: workerConnection,
    workflowBundle,
  });
  const running = worker.run();
  stopWorker = async () => {
    worker.shutdown();
    await running;
  };
  clients = await Promise.all(cluster.addresses.map((address) => RelayClient.connect({ address, taskQueue })));
});

afterAll(async () => {
  await stopWorker?.();
  await Promise.all((clients ?? []).map((client) => client.close()));
  await workerConnection?.close();
  await cluster?.stop();
});

describe('Relay-E on a two-node Temporal Server cluster on PostgreSQL', () => {
  it('answers on both frontends for one cluster whose two nodes each run all four services', async () => {
    const infos = await Promise.all(
      cluster.addresses.map(async (address) => {
        const connection = await Connection.connect({ address });
        try {
          return await connection.workflowService.getClusterInfo({});
        } finally {
          await connection.close();
        }
      }),
    );
    expect(new Set(infos.map((info) => info.clusterId)).size).toBe(1);
    expect(infos[0]).toMatchObject({ serverVersion: '1.29.1', historyShardCount: 4, persistenceStore: 'postgres12' });
    const roles = (await cluster.members()).map((member) => member.role);
    for (const role of ['frontend', 'history', 'matching', 'worker'] as const) {
      expect(
        roles.filter((candidate) => candidate === role),
        role,
      ).toHaveLength(2);
    }
  });

  it.each([
    { startOn: 1, decideOn: 2, decision: 'approve' as const },
    { startOn: 2, decideOn: 1, decision: 'reject' as const },
  ])(
    'runs a run started through node $startOn and decided ($decision) through node $decideOn to its answer',
    async ({ startOn, decideOn, decision }) => {
      const starter = clients[startOn - 1] as RelayClient;
      const decider = clients[decideOn - 1] as RelayClient;
      const { runId } = await starter.startRun({ tenantId: 'smoke', model: 'scripted:pay', prompt: 'pay' });
      const waiting = await waitForRun(decider, runId, (run) => run.pendingApprovals.length === 1, {
        timeoutMs: 60_000,
      });
      expect(waiting.pendingApprovals[0]?.toolCallId).toBe('call_1_0');

      if (decision === 'approve') await decider.approve(runId, 'call_1_0', { approver: 'ops' });
      else await decider.reject(runId, 'call_1_0', { approver: 'ops' });

      expect(await starter.result(runId)).toMatchObject({ status: 'completed', output: 'done' });
      expect(payments.filter((payment) => payment.to === runId)).toHaveLength(decision === 'approve' ? 1 : 0);
    },
  );

  it("serves each node's Prometheus metrics 9 ports above its frontend (METRICS_PORT in relay-e.yaml)", async () => {
    for (const address of cluster.addresses) {
      const [host, port] = address.split(':');
      const metrics = await (await fetch(`http://${host}:${Number(port) + 9}/metrics`)).text();
      // The frontend's own request counter: what an operator alerts on first.
      expect(metrics, address).toMatch(/^service_requests\{.*service_name="frontend"/m);
    }
  });

  it('lists its worker on the task queue through either node, so a question slow to answer is not cut short', async () => {
    // A question with no answer after a second looks whether the run's task queue lists a worker, which describes the
    // root of the queue's partitions (four here, on two matching nodes): the worker's polls must reach it. Listed, the
    // run is then probed with a short query, which the worker answers through either node.
    const { runId } = await clients[0]!.startRun({ tenantId: 'smoke', model: 'scripted:pay', prompt: 'pay' });
    await waitForRun(clients[0]!, runId, (run) => run.pendingApprovals.length === 1, { timeoutMs: 60_000 });
    for (const client of clients) {
      await expect(slowQuestion(client, runId, taskQueue)).resolves.toBe('answered');
      await expect(slowQuestion(client, runId, `${taskQueue}-unpolled`)).rejects.toMatchObject({
        code: 'run_unavailable',
      });
    }
  });

  it('runs a run of a versioned worker as AUTO_UPGRADE on its build (Worker Versioning on the cluster)', async () => {
    const versionedQueue = `cluster-versioned-${randomUUID()}`;
    const deploymentName = `relay-cluster-${randomUUID()}`;
    const connection = await NativeConnection.connect({ address: cluster.addresses[1] ?? '' });
    const worker = await createWorker({
      tools: [payTool],
      models: { scripted: model },
      taskQueue: versionedQueue,
      connection,
      workflowBundle,
      workerOptions: versionedWorkerOptions({ deploymentName, buildId: 'b1' }),
    });
    const running = worker.run();
    const client = await RelayClient.connect({ address: cluster.addresses[0] ?? '', taskQueue: versionedQueue });
    try {
      await makeCurrentVersion(client.temporal, 'default', deploymentName, 'b1');
      const { runId } = await client.startRun({ tenantId: 'smoke', model: 'scripted:pay', prompt: 'pay' });
      await waitForRun(client, runId, (run) => run.pendingApprovals.length === 1, { timeoutMs: 60_000 });
      await client.approve(runId, 'call_1_0', { approver: 'ops' });
      expect(await client.result(runId)).toMatchObject({ status: 'completed', output: 'done' });
      expect(await versioningOf(client.temporal, runId)).toEqual({ buildId: 'b1', behavior: autoUpgrade });
      // A versioned worker is listed on its task queue too.
      await expect(slowQuestion(client, runId, versionedQueue)).resolves.toBe('answered');
    } finally {
      worker.shutdown();
      await running;
      await client.close();
      await connection.close();
    }
  });
});
