import type { NativeConnection } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { startCatalogPublisher } from '../../../src/worker/worker-catalog-publisher.js';

/** A gRPC error as the server answers it. */
function grpcError(code: number, details: string): Error {
  return Object.assign(new Error(`${code} ${details}`), { code, details, metadata: { get: () => [] } });
}

/** A connection whose server takes announcements and answers withdrawals (and catalog reads) with `withdrawal`. */
function connectionAnswering(withdrawal: Error): NativeConnection {
  const workflowService = {
    signalWithStartWorkflowExecution: async () => ({ runId: 'catalog-run' }),
    describeWorkflowExecution: async () => {
      throw grpcError(5, 'workflow not found');
    },
    signalWorkflowExecution: async () => {
      throw withdrawal;
    },
  };
  return {
    workflowService,
    plugins: [],
    withDeadline: <T>(_deadline: unknown, fn: () => Promise<T>) => fn(),
    withMetadata: <T>(_metadata: unknown, fn: () => Promise<T>) => fn(),
    withAbortSignal: <T>(_signal: unknown, fn: () => Promise<T>) => fn(),
  } as unknown as NativeConnection;
}

async function warningsOfStop(withdrawal: Error): Promise<string[]> {
  const warnings: string[] = [];
  const publisher = startCatalogPublisher(
    { connection: connectionAnswering(withdrawal), namespace: 'default', taskQueue: 'shop' },
    () => ({ tools: [], modelPrefixes: ['scripted'] }),
    (message, error) => warnings.push(`${message}: ${String(error)}`),
  );
  await publisher.stop();
  return warnings;
}

describe("withdrawing a worker's catalog announcement as it stops", () => {
  it('is no warning when the catalog workflow no longer exists: there is nothing to withdraw', async () => {
    expect(await warningsOfStop(grpcError(5, 'workflow execution already completed'))).toEqual([]);
  });

  it('is a warning when it fails otherwise: the announcement then stays until it lapses', async () => {
    expect(await warningsOfStop(grpcError(14, 'connection refused'))).toEqual([
      expect.stringMatching(/^Could not withdraw the worker catalog: /),
    ]);
  });
});
