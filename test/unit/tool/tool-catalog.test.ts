import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { formatToolListing, toToolListing } from '../../../src/tool/tool-listing.js';
import { defineTool } from '../../../src/tool/define-tool.js';
import { toCatalogEntry, toJsonSchema } from '../../../src/tool/tool-catalog.js';

describe('toJsonSchema', () => {
  it('describes what the model must send, with descriptions, and defaults as optional', () => {
    const schema = z.object({
      account_id: z.string().describe('Account identifier'),
      currency: z.string().default('USD'),
      amount: z.string().transform(Number),
    });

    expect(toJsonSchema(schema)).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        account_id: { type: 'string', description: 'Account identifier' },
        currency: { type: 'string', default: 'USD' },
        amount: { type: 'string' },
      },
      required: ['account_id', 'amount'],
      additionalProperties: false,
    });
  });

  it('closes every object that drops the keys it does not name, so a run refuses them instead of recording them', () => {
    const schema = z.object({
      lines: z.array(z.object({ sku: z.string() })),
      kind: z.discriminatedUnion('type', [z.object({ type: z.literal('a') }), z.object({ type: z.literal('b') })]),
      both: z.intersection(z.object({ p: z.string() }), z.object({ q: z.string() })),
      strict: z.strictObject({ s: z.string() }),
      loose: z.looseObject({ l: z.string() }),
      tags: z.record(z.string(), z.string()),
    });

    const { properties } = toJsonSchema(schema) as { properties: Record<string, Record<string, unknown>> };
    const closedness = (part: unknown) => (part as { additionalProperties?: unknown }).additionalProperties;

    expect({
      line: closedness(properties['lines']?.['items']),
      kinds: (properties['kind']?.['oneOf'] as unknown[]).map(closedness),
      both: closedness(properties['both']),
      strict: closedness(properties['strict']),
      loose: closedness(properties['loose']),
      tags: closedness(properties['tags']),
    }).toEqual({ line: false, kinds: [false, false], both: false, strict: false, loose: {}, tags: { type: 'string' } });
  });

  it('leaves an intersection Zod cannot fold into one object open, as closed members would refuse each other', () => {
    const described = z.object({ p: z.string() }).describe('a member Zod does not fold');
    const schema = z.object({ both: z.intersection(described, z.object({ q: z.string() })) });

    const converted = toJsonSchema(schema) as { properties: { both: { allOf: Array<Record<string, unknown>> } } };

    expect(converted.properties.both.allOf.map((member) => member['additionalProperties'])).toEqual([
      undefined,
      undefined,
    ]);
  });

  it.each([
    ['a date', z.object({ at: z.date() }), 'Date'],
    ['a bigint', z.object({ n: z.bigint() }), 'BigInt'],
    ['a bare transform', z.object({ x: z.transform((value) => value) }), 'Transforms'],
  ])('refuses %s with invalid_tool_definition instead of allowing anything', (_label, schema, what) => {
    expect(() => toJsonSchema(schema)).toThrow(
      expect.objectContaining({
        code: 'invalid_tool_definition',
        message: expect.stringContaining(`${what} cannot be represented in JSON Schema`) as unknown,
      }),
    );
  });

  it('names the tool in the error when given its name', () => {
    expect(() => toJsonSchema(z.object({ at: z.date() }), 'schedule')).toThrow("The input schema of tool 'schedule'");
  });
});

describe('toCatalogEntry', () => {
  it("converts a tool's input schema once and shares it, frozen, between entries", () => {
    const tool = defineTool({
      name: 'lookup',
      description: 'Look a record up.',
      inputSchema: z.object({ id: z.string(), fields: z.array(z.string()).optional() }),
      execute: async () => ({}),
    });
    const first = toCatalogEntry(tool);
    const second = toCatalogEntry(tool);
    expect(second).not.toBe(first);
    expect(second.inputSchema).toBe(first.inputSchema);
    expect(Object.isFrozen(first.inputSchema)).toBe(true);
    expect(() => {
      (first.inputSchema['properties'] as Record<string, unknown>)['id'] = {};
    }).toThrow(TypeError);
    expect(toCatalogEntry(tool).inputSchema).toEqual(toJsonSchema(tool.inputSchema));
  });

  const schema = z.object({ to: z.string() });

  it('leaves out the limits a tool does not set', () => {
    const notify = defineTool({
      name: 'notify',
      description: 'Send a note.',
      inputSchema: schema,
      execute: () => 'sent',
    });

    expect(toCatalogEntry(notify)).toEqual({
      name: 'notify',
      description: 'Send a note.',
      inputSchema: toJsonSchema(schema),
      requiresApproval: false,
    });
  });

  it('carries approval, timeout and retry policy into the entry as copies', () => {
    const retry = { maximumAttempts: 1, initialInterval: '2s' };
    const pay = defineTool({
      name: 'pay',
      description: 'Pay an invoice.',
      inputSchema: schema,
      requiresApproval: true,
      approvalTimeoutMs: 900_000,
      approvers: ['finance-lead', 'cfo'],
      timeoutMs: 10_000,
      retry,
      execute: () => 'paid',
    });

    const entry = toCatalogEntry(pay);

    expect(entry).toMatchObject({ requiresApproval: true, approvalTimeoutMs: 900_000, timeoutMs: 10_000, retry });
    expect(formatToolListing(toToolListing(entry))).toContain(
      'policy: needs approval, decision within 900000 ms, decided by finance-lead or cfo, timeout 10000 ms, 1 attempt(s)',
    );
    expect(entry.retry).not.toBe(retry);
    expect(entry.approvers).toEqual(['finance-lead', 'cfo']);
    expect(entry.approvers).not.toBe(pay.approvers);
  });

  it('records a tool whose approval is a rule as one that may ask, and says it is a rule', () => {
    const pay = defineTool({
      name: 'pay',
      description: 'Pay an invoice.',
      inputSchema: z.object({ amount: z.number() }),
      requiresApproval: ({ amount }) => amount > 100,
      execute: () => 'paid',
    });
    expect(toCatalogEntry(pay)).toMatchObject({ requiresApproval: true, approvalByRule: true });
    expect(toToolListing(toCatalogEntry(pay))).toMatchObject({ approvalByRule: true });
    expect(formatToolListing(toToolListing(toCatalogEntry(pay)))).toContain('policy: approval by rule');
    const plain = toCatalogEntry({ ...pay, requiresApproval: true });
    expect(plain.approvalByRule).toBeUndefined();
  });
});
