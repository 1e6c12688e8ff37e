/**
 * A Relay-E worker whose only tools come from the fixture MCP server over stdio, in its own process so tests can
 * SIGKILL it mid-call. Environment: TEMPORAL_ADDRESS, TASK_QUEUE, FIXTURE_EVENTS_FILE, NOTE_FILE.
 */
import { mcpTools } from '../../src/mcp/mcp-tools.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { quietenWorkerRuntime } from '../../src/testing/quieten-worker-runtime.js';
import { fixtureStdioTransport } from './mcp-test-kit.js';

const {
  TEMPORAL_ADDRESS: address,
  TASK_QUEUE: taskQueue,
  FIXTURE_EVENTS_FILE: eventsFile,
  NOTE_FILE: noteFile,
} = process.env;
if (!address || !taskQueue || !eventsFile || !noteFile) {
  throw new Error('TEMPORAL_ADDRESS, TASK_QUEUE, FIXTURE_EVENTS_FILE and NOTE_FILE are required');
}

const model = scriptedModel([
  { toolCalls: [{ id: 'note', name: 'fixture_write_note', input: { path: noteFile, text: 'draft', delayMs: 3_000 } }] },
  { text: 'noted' },
]);

quietenWorkerRuntime();
const worker = await createWorker({
  tools: [mcpTools({ name: 'fixture', transport: fixtureStdioTransport({ FIXTURE_EVENTS_FILE: eventsFile }) })],
  models: { scripted: model },
  taskQueue,
  address,
});
process.stdout.write('ready\n');
await worker.run();
