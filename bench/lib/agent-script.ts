/**
 * The agent every variant runs, free of imports so the peer (its own package) shares it: step k calls
 * `add({ a: k, b: 1 })`, and after the last tool step the model answers in text. The number of tool steps
 * travels in the prompt, so one zero-latency model serves runs of any length.
 */

/** The prompt of a run of `steps` tool steps. */
export function agentPrompt(steps: number): string {
  return `Add one, ${steps} times. steps=${steps}`;
}

/** How many tool steps the prompt asks for. */
export function stepsInPrompt(prompt: string): number {
  const match = /steps=(\d+)/.exec(prompt);
  return match ? Number(match[1]) : 0;
}

/** The model's turn at `step` (1-based): a tool call while steps remain, the final answer after. */
export function agentTurn(step: number, steps: number): { toolCall: { a: number; b: number } } | { text: string } {
  return step <= steps ? { toolCall: { a: step, b: 1 } } : { text: `Done after ${steps} additions.` };
}

export const addToolDescription = 'Add two numbers.';

/** The JSON Schema of `add`, as the catalog records it and the model receives it. */
export const addToolJsonSchema = {
  type: 'object',
  properties: { a: { type: 'number' }, b: { type: 'number' } },
  required: ['a', 'b'],
  additionalProperties: false,
} as const;
