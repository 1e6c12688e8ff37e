import { defineConfig, defineTool } from '@relay-e/engine';
import { scriptedModel } from '@relay-e/engine/testing';
import { z } from 'zod';

const lookUpOrder = defineTool({
  name: 'look_up_order',
  description: 'Return the shipping status of a customer order by its id.',
  inputSchema: z.object({ order_id: z.string().describe('Order id, e.g. ORD-1001') }),
  execute: async ({ order_id }) => ({ order_id, status: 'shipped', carrier: 'DHL' }),
});

export default defineConfig({
  tools: [lookUpOrder],
  // OPENAI_API_KEY or ANTHROPIC_API_KEY in the environment add those providers; `scripted` needs no key.
  models: {
    scripted: scriptedModel((request) =>
      request.step === 1
        ? { toolCalls: [{ name: 'look_up_order', input: { order_id: 'ORD-1001' } }] }
        : { text: 'Order ORD-1001 has shipped with DHL.' },
    ),
  },
});
