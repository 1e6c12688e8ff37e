/**
 * Validation cost in the workflow, per tool call: the workflow's own `ToolCallValidator` called directly in Node
 * for a fixed number of iterations, cases interleaved, several rounds; ns per call is the median over rounds.
 * Then its share of a workflow task: the median workflow task (started to completed, from Relay-E run
 * histories on the dev server) that validates a call, against the per-call cost measured here.
 *
 *   npm run bench:validation -- [--rounds 5] [--iterations 20000] [--runs 10]
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { ToolCallValidator } from '../workflows/tool-call-validator.js';
import type { ToolCatalogEntry } from '../src/shared/tool-catalog.js';
import { addToolDescription, addToolJsonSchema } from './lib/agent-script.js';
import { readHistoryFacts } from './lib/history-facts.js';
import { interleave, withVariants, writeResult } from './lib/measure-harness.js';
import { summarize } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: 'validation-cost' },
    rounds: { type: 'string', default: '5' },
    iterations: { type: 'string', default: '20000' },
    runs: { type: 'string', default: '10' },
  },
});
const rounds = Number(values.rounds);
const iterations = Number(values.iterations);

const transferSchema = z.toJSONSchema(
  z.object({
    from: z.string().min(1),
    to: z.string().min(1),
    amount: z.number().positive(),
    currency: z.enum(['USD', 'EUR', 'GBP']),
    memo: z.string().max(140).optional(),
    tags: z.array(z.string()).max(5).optional(),
  }),
  { io: 'input' },
);
const catalog: ToolCatalogEntry[] = [
  { name: 'add', description: addToolDescription, inputSchema: addToolJsonSchema, requiresApproval: false },
  { name: 'transfer', description: 'Move money.', inputSchema: transferSchema, requiresApproval: true },
];
const validator = new ToolCallValidator(catalog);

const cases: Record<string, () => unknown> = {
  'add, valid': () => validator.check('add', { a: 1, b: 2 }),
  'transfer, valid': () =>
    validator.check('transfer', { from: 'A', to: 'B', amount: 5, currency: 'EUR', memo: 'rent', tags: ['x'] }),
  'add, invalid (issues returned)': () => validator.check('add', { a: 'one', b: 2 }),
  'unknown tool': () => validator.check('subtract', { a: 1, b: 2 }),
  'first use: build from JSON Schema': () => z.fromJSONSchema(transferSchema),
};

const nsPerCall: Record<string, number[]> = {};
for (const run of Object.values(cases)) for (let index = 0; index < 1000; index++) run();
for (let round = 0; round < rounds; round++) {
  for (const [name, run] of interleave(Object.entries(cases), round)) {
    const count = name.startsWith('first use') ? Math.ceil(iterations / 20) : iterations;
    const started = process.hrtime.bigint();
    for (let index = 0; index < count; index++) run();
    (nsPerCall[name] ??= []).push(Number(process.hrtime.bigint() - started) / count);
  }
}
const micro: Record<string, ReturnType<typeof summarize>> = {};
for (const [name, samples] of Object.entries(nsPerCall)) {
  micro[name] = summarize(samples);
  console.log(
    `${name.padEnd(34)} ${(micro[name].p50 / 1000).toFixed(2)} µs/call (min ${(micro[name].min / 1000).toFixed(2)}, max ${(micro[name].max / 1000).toFixed(2)})`,
  );
}

const workflowTask = await withVariants(['relay'], async ({ variants, client }) => {
  const relay = variants.get('relay');
  if (!relay) return undefined;
  const answer = await relay.run({ steps: 3, runs: Number(values.runs), concurrency: 1 });
  const taskMs: number[] = [];
  for (const id of answer.ids) taskMs.push(...(await readHistoryFacts(client, id)).workflowTaskMs);
  return summarize(taskMs);
});
const validNs = micro['add, valid']?.p50 ?? 0;
const share = workflowTask ? validNs / 1e6 / workflowTask.p50 : undefined;
if (workflowTask) {
  console.log(
    `workflow task p50 ${workflowTask.p50} ms: validating one call is ${((share ?? 0) * 100).toFixed(3)} % of it`,
  );
}

writeResult(values.out, {
  description: 'ToolCallValidator.check in Node (ns per call) and its share of a Relay-E workflow task',
  rounds,
  iterations,
  nsPerCall: micro,
  workflowTaskMs: workflowTask,
  validShareOfWorkflowTask: share,
});
