import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { undeclaredFields } from '../../../src/shared/undeclared-fields.js';
import { toJsonSchema } from '../../../src/tool/tool-catalog.js';

// The JSON Schema a defineTool tool's catalog entry holds: its Zod schema drops unknown keys, and says nothing of them.
const transfer = toJsonSchema(
  z.object({
    from: z.string(),
    amount: z.number(),
    lines: z.array(z.object({ sku: z.string() })).optional(),
    tags: z.record(z.string(), z.string()).optional(),
    loose: z.looseObject({ note: z.string() }).optional(),
  }),
);

describe('undeclaredFields', () => {
  it('names a field the schema does not name, at the top and inside named objects and array items', () => {
    const input = { from: 'A', amount: 1, dry_run: true, lines: [{ sku: 'x' }, { sku: 'y', qty: 2 }] };
    expect(undeclaredFields(transfer, input)).toEqual([
      {
        path: 'dry_run',
        message: "Not a field of this tool's input schema",
        code: 'unrecognized_keys',
      },
      {
        path: 'lines[1].qty',
        message: "Not a field of this tool's input schema",
        code: 'unrecognized_keys',
      },
    ]);
  });

  it('lets through what the schema leaves open: records, loose objects, and schemas it does not look into', () => {
    const input = { from: 'A', amount: 1, tags: { any: 'x' }, loose: { note: 'n', extra: 1 } };
    expect(undeclaredFields(transfer, input)).toEqual([]);
    expect(undeclaredFields({ type: 'object' }, { anything: 1 })).toEqual([]);
    expect(undeclaredFields({ anyOf: [{ type: 'object', properties: {} }] }, { anything: 1 })).toEqual([]);
  });
});
