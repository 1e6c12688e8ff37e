import { describe, expect, it } from 'vitest';
import { undeclaredFields } from '../../../src/shared/undeclared-fields.js';

// A catalog entry whose schema names its fields and says nothing of others: an MCP server's, or a defineTool tool's as
// runs recorded it before such objects were closed (its Zod schema drops unknown keys).
const transfer = {
  type: 'object',
  properties: {
    from: { type: 'string' },
    amount: { type: 'number' },
    lines: { type: 'array', items: { type: 'object', properties: { sku: { type: 'string' } } } },
    tags: { type: 'object', additionalProperties: { type: 'string' } },
    loose: { type: 'object', properties: { note: { type: 'string' } }, additionalProperties: {} },
  },
  required: ['from', 'amount'],
};

describe('undeclaredFields', () => {
  it('names a field the schema does not name, at the top and inside named objects and array items', () => {
    const input = { from: 'A', amount: 1, dry_run: true, lines: [{ sku: 'x' }, { sku: 'y', qty: 2 }] };
    expect(undeclaredFields(transfer, input)).toEqual([
      {
        path: 'dry_run',
        message: 'Not a field of the schema',
        code: 'unrecognized_keys',
      },
      {
        path: 'lines[1].qty',
        message: 'Not a field of the schema',
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
