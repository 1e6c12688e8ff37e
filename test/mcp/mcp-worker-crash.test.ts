import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { RelayClient } from '../../src/client/relay-client.js';
import { waitForRun } from '../helpers/relay-test-kit.js';
import { setUpChildWorkerTests, killChildWorker, spawnChildWorker } from '../helpers/spawn-child-worker.js';
import { eventually, readServerEvents, temporaryFolder } from './mcp-test-kit.js';

const kit = setUpChildWorkerTests();

it('completes an approved MCP call cut short by a worker SIGKILL on a new worker, applying the approved input once', async () => {
  const { address, namespace } = kit;
  const folder = temporaryFolder('mcp-crash');
  const env = {
    TEMPORAL_ADDRESS: address,
    TASK_QUEUE: `mcp-crash-${randomUUID()}`,
    FIXTURE_EVENTS_FILE: join(folder, 'events.jsonl'),
    NOTE_FILE: join(folder, 'note.txt'),
  };
  const startWorker = () => spawnChildWorker(join(import.meta.dirname, 'mcp-child-worker.ts'), env);
  const client = await RelayClient.connect({
    address,
    namespace,
    taskQueue: env.TASK_QUEUE,
  });

  const first = await startWorker();
  const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:note', prompt: 'write', maxSteps: 3 });
  await waitForRun(client, runId, (run) => run.pendingApprovals.length === 1, { timeoutMs: 40_000 });
  await client.approve(runId, 'call_1_0', {
    approver: 'ops',
    input: { path: env.NOTE_FILE, text: 'approved', delayMs: 3_000 },
  });
  const attempts = () =>
    readServerEvents(env.FIXTURE_EVENTS_FILE).filter((event) => event.event === 'write_note_attempt');
  await eventually('the server started the approved call', () => attempts().length === 1, 20_000);
  await killChildWorker(first);

  // The activity times out on its heartbeat and is attempted again (write_note is annotated idempotent).
  await startWorker();
  await expect(client.result(runId)).resolves.toMatchObject({ status: 'completed', output: 'noted' });

  expect(attempts().length).toBeGreaterThanOrEqual(2);
  // One call, one idempotency key (`runId/<first execution>/callId`), however many attempts it took.
  const keys = new Set(attempts().map((event) => event.key));
  expect(keys.size).toBe(1);
  expect([...keys][0]).toMatch(new RegExp(`^${runId}/[\\w-]+/call_1_0$`));
  expect(new Set(attempts().map((event) => event.text))).toEqual(new Set(['approved']));
  expect(existsSync(env.NOTE_FILE) ? readFileSync(env.NOTE_FILE, 'utf8') : '').toBe('approved\n');
  await client.close();
}, 180_000);
