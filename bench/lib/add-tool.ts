/** The benchmarks' one tool as Relay-E defines it (the peer defines its own in its package, from agent-script.ts). */
import { z } from 'zod';
import { defineTool } from '../../src/tool/define-tool.js';
import { addToolDescription } from './agent-script.js';

const addInput = z.object({ a: z.number(), b: z.number() });

export const addTool = defineTool({
  name: 'add',
  description: addToolDescription,
  inputSchema: addInput,
  execute: async ({ a, b }) => ({ result: a + b }),
});

/** The same tool behind an approval, for the approval-latency runs. */
export const addWithApprovalTool = defineTool({
  name: 'add_with_approval',
  description: addToolDescription,
  inputSchema: addInput,
  requiresApproval: true,
  execute: async ({ a, b }) => ({ result: a + b }),
});
