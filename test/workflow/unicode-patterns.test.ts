import { describe, expect, it } from 'vitest';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { defineJsonSchemaTool } from '../../src/tool/define-tool.js';
import { eventTypes, useRelayTestKit } from '../helpers/relay-test-kit.js';
import { currentHistoryFile, recordHistoryIfRequested } from '../helpers/replay-histories.js';

const kit = useRelayTestKit();

describe('a tool whose JSON Schema pattern needs Unicode mode, as an MCP server may describe one', () => {
  it('has its calls checked in it: a name of letters reaches the tool', async () => {
    const greeted: string[] = [];
    const greet = defineJsonSchemaTool({
      name: 'greet',
      description: 'Greets someone by a name of letters.',
      inputSchema: {
        type: 'object',
        properties: { name: { type: 'string', pattern: '^\\p{L}+$' } },
        required: ['name'],
      },
      execute: (input) => {
        const { name } = input as { name: string };
        greeted.push(name);
        return `Hello, ${name}`;
      },
    });
    const turns = [{ toolCalls: [{ name: 'greet', input: { name: 'José' } }] }, { text: 'Greeted.' }];
    const running = await kit.startWorker({ tools: [greet], models: { scripted: scriptedModel(turns) } });
    try {
      const { client } = running;
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'greet José' });
      await client.result(runId);
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(runId),
        currentHistoryFile('pattern-in-unicode-mode'),
      );
      expect(eventTypes(await client.events(runId))).toContain('tool_succeeded');
      expect(greeted).toEqual(['José']);
    } finally {
      await running.stop();
    }
  });
});
