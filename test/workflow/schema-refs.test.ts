import { describe, expect, it } from 'vitest';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { defineJsonSchemaTool } from '../../src/tool/define-tool.js';
import { eventTypes, useRelayTestKit } from '../helpers/relay-test-kit.js';

const kit = useRelayTestKit();

describe('a tool whose JSON Schema uses one object twice by a pointer into properties, as zod-to-json-schema writes', () => {
  it('is offered, and the run checks the second use as the first: a bad place goes back to the model', async () => {
    const moves: unknown[] = [];
    const place = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] };
    const move = defineJsonSchemaTool({
      name: 'move',
      description: 'Moves a thing from one place to another.',
      inputSchema: {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: { from: place, to: { $ref: '#/properties/from' } },
        required: ['from', 'to'],
      },
      execute: (input) => {
        moves.push(input);
        return 'moved';
      },
    });
    const turns = [
      { toolCalls: [{ name: 'move', input: { from: { id: 'shelf' }, to: { id: 7 } } }] },
      { toolCalls: [{ name: 'move', input: { from: { id: 'shelf' }, to: { id: 'box' } } }] },
      { text: 'Moved.' },
    ];
    const running = await kit.startWorker({ tools: [move], models: { scripted: scriptedModel(turns) } });
    try {
      const { client } = running;
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'move it' });
      expect((await client.result(runId)).output).toBe('Moved.');
      const events = await client.events(runId);
      expect(events.find((event) => event.type === 'tool_validation_failed')).toMatchObject({
        toolCallId: 'call_1_0',
        issues: [expect.objectContaining({ path: 'to.id' }) as unknown],
      });
      expect(eventTypes(events).filter((type) => type === 'tool_succeeded')).toHaveLength(1);
      expect(moves).toEqual([{ from: { id: 'shelf' }, to: { id: 'box' } }]);
    } finally {
      await running.stop();
    }
  });
});
