import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll } from 'vitest';
import { startTemporalDevServer } from '../../src/dev/temporal-dev-server.js';
import type { TemporalDevServer } from '../../src/dev/temporal-dev-server.js';

/** A dev server of a test file's own, and a client of it. */
export interface SuggestingDevServer {
  readonly address: string;
  readonly temporal: Client;
}

/**
 * Starts, before the file's tests, a dev server of its own whose Temporal suggests continuing as new to every workflow
 * task that starts with `suggestFrom()` events or more (`limit.historyCount.suggestContinueAsNew`), so that the
 * suggestion first comes with a task a test chooses; stops it after them. Call it at the top of the file.
 */
export function useDevServerSuggestingFrom(suggestFrom: () => Promise<number>): SuggestingDevServer {
  let server: TemporalDevServer | undefined;
  let connection: Connection | undefined;
  let temporal: Client | undefined;
  beforeAll(async () => {
    const events = await suggestFrom();
    server = await startTemporalDevServer({ dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': events } });
    connection = await Connection.connect({ address: server.address });
    temporal = new Client({ connection });
  }, 120_000);
  afterAll(async () => {
    await connection?.close();
    await server?.stop();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('The dev server starts in beforeAll: use it inside tests');
    return value;
  };
  return {
    get address() {
      return started(server).address;
    },
    get temporal() {
      return started(temporal);
    },
  };
}
