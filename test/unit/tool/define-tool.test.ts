import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, tool } from '../../../src/tool/define-tool.js';
import { toCatalogEntry } from '../../../src/tool/tool-catalog.js';
import { definitionRefusal } from '../../helpers/definition-refusal.js';

const schema = z.object({ account_id: z.string().describe('Account identifier') });
const execute = (input: { account_id: string }) => ({ account_id: input.account_id, balance_usd: 4231.55 });

describe('defineTool', () => {
  it('takes an approval rule, and refuses requiresApproval that is neither a boolean nor a function', () => {
    const rule = (input: { account_id: string }) => input.account_id !== 'savings';
    const guarded = defineTool({
      name: 'close',
      description: 'Close.',
      inputSchema: schema,
      requiresApproval: rule,
      execute,
    });
    expect(guarded.requiresApproval).toBe(rule);
    const refusal = definitionRefusal(() =>
      defineTool({
        name: 'close',
        description: 'Close.',
        inputSchema: schema,
        requiresApproval: 'yes' as unknown as boolean,
        execute,
      }),
    );
    expect(refusal.message).toBe("Tool 'close': requiresApproval must be true, false or a function of the input");
  });

  it('returns the definition with requiresApproval false when left out', () => {
    const getBalance = defineTool({
      name: 'get_balance',
      description: 'Return the current balance for a user account.',
      inputSchema: schema,
      execute,
    });

    expect(getBalance).toEqual({
      name: 'get_balance',
      description: 'Return the current balance for a user account.',
      inputSchema: schema,
      requiresApproval: false,
      execute,
    });
    expect(Object.isFrozen(getBalance)).toBe(true);
  });

  it('keeps the optional fields that were given and adds no others', () => {
    const guardrails = { before: () => undefined };
    const transfer = defineTool({
      name: 'transfer',
      description: 'Move money.',
      inputSchema: schema,
      requiresApproval: true,
      timeoutMs: 5_000,
      retry: { maximumAttempts: 1 },
      guardrails,
      maxResultBytes: 1_024,
      execute,
    });

    expect(Object.keys(transfer).sort()).toEqual(
      [
        'description',
        'execute',
        'guardrails',
        'inputSchema',
        'maxResultBytes',
        'name',
        'requiresApproval',
        'retry',
        'timeoutMs',
      ].sort(),
    );
    expect(transfer).toMatchObject({
      requiresApproval: true,
      timeoutMs: 5_000,
      retry: { maximumAttempts: 1 },
      maxResultBytes: 1_024,
    });
    expect(transfer.guardrails).toBe(guardrails);
  });

  it('produces the same definition through the short form tool()', () => {
    const options = {
      name: 'get_balance',
      description: 'Return the balance.',
      requiresApproval: true,
      timeoutMs: 100,
      execute,
    };

    expect(tool({ ...options, input: schema })).toEqual(defineTool({ ...options, inputSchema: schema }));
  });

  it.each(['a', 'get_balance', 'get-balance', 'Tool_2', 'x'.repeat(64)])('accepts the name %j', (name) => {
    expect(defineTool({ name, description: 'A tool.', inputSchema: schema, execute }).name).toBe(name);
  });

  it.each(['', 'x'.repeat(65), 'get balance', 'get.balance', 'naïve', 'a/b'])('refuses the name %j', (name) => {
    const error = definitionRefusal(() => defineTool({ name, description: 'A tool.', inputSchema: schema, execute }));

    expect(error.code).toBe('invalid_tool_definition');
    expect(error.message).toContain(JSON.stringify(name));
  });

  it('refuses a definition without a description, a schema or an execute function', () => {
    const bare = { name: 'bare', description: 'A tool.', inputSchema: schema, execute };

    expect(definitionRefusal(() => defineTool({ ...bare, description: ' ' })).message).toMatch(/needs a description/);
    expect(definitionRefusal(() => defineTool({ ...bare, inputSchema: {} as never })).message).toMatch(/Zod schema/);
    expect(definitionRefusal(() => defineTool({ ...bare, execute: undefined as never })).message).toMatch(/execute/);
  });

  it('refuses limits that are not positive integers', () => {
    const bare = { name: 'limits', description: 'A tool.', inputSchema: schema, execute };

    expect(definitionRefusal(() => defineTool({ ...bare, timeoutMs: 0 })).message).toContain('timeoutMs');
    expect(definitionRefusal(() => defineTool({ ...bare, approvalTimeoutMs: 0.5 })).message).toContain(
      'approvalTimeoutMs',
    );
    expect(definitionRefusal(() => defineTool({ ...bare, maxResultBytes: 1.5 })).message).toContain('maxResultBytes');
    expect(definitionRefusal(() => defineTool({ ...bare, retry: { maximumAttempts: -1 } })).message).toContain(
      'retry.maximumAttempts',
    );
  });

  it('takes the approvers who may decide its calls, and refuses a list that could never apply', () => {
    const schema = z.object({ amount: z.number() });
    const execute = () => 'ok';
    const bare = { name: 'pay', description: 'Pays.', inputSchema: schema, execute };
    const decided = defineTool({ ...bare, requiresApproval: true, approvers: ['finance-lead', 'cfo'] });
    expect(toCatalogEntry(decided)).toMatchObject({ requiresApproval: true, approvers: ['finance-lead', 'cfo'] });
    expect(definitionRefusal(() => defineTool({ ...bare, requiresApproval: true, approvers: [] })).message).toBe(
      "Tool 'pay': approvers must be a list of one or more approver names",
    );
    expect(definitionRefusal(() => defineTool({ ...bare, requiresApproval: true, approvers: [' '] })).message).toMatch(
      /approvers must be a list/,
    );
    expect(definitionRefusal(() => defineTool({ ...bare, approvers: ['cfo'] })).message).toMatch(
      /approvers needs requiresApproval/,
    );
  });

  it('takes how many approvers must approve a call, recorded in the catalog above one, and refuses a count never met', () => {
    const schema = z.object({ amount: z.number() });
    const bare = {
      name: 'pay',
      description: 'Pays.',
      inputSchema: schema,
      execute: () => 'ok',
      requiresApproval: true,
    };
    expect(toCatalogEntry(defineTool({ ...bare, approvalsRequired: 2 }))).toMatchObject({ approvalsRequired: 2 });
    expect(toCatalogEntry(defineTool({ ...bare, approvalsRequired: 1 }))).not.toHaveProperty('approvalsRequired');
    for (const approvalsRequired of [0, 1.5, 11, Number.NaN]) {
      expect(definitionRefusal(() => defineTool({ ...bare, approvalsRequired })).message).toBe(
        "Tool 'pay': approvalsRequired must be a whole number from 1 to 10",
      );
    }
    expect(
      definitionRefusal(() => defineTool({ ...bare, requiresApproval: false, approvalsRequired: 2 })).message,
    ).toMatch(/approvalsRequired needs requiresApproval/);
    expect(
      definitionRefusal(() => defineTool({ ...bare, approvers: ['cfo', 'ceo'], approvalsRequired: 3 })).message,
    ).toBe("Tool 'pay': approvalsRequired (3) is more than its 2 approver(s)");
  });

  it('refuses an input schema that JSON Schema cannot express, naming the tool', () => {
    const error = definitionRefusal(() =>
      defineTool({
        name: 'schedule',
        description: 'Book a slot.',
        inputSchema: z.object({ at: z.date() }),
        execute: () => 1,
      }),
    );

    expect(error.code).toBe('invalid_tool_definition');
    expect(error.message).toContain("tool 'schedule'");
    expect(error.message).toContain('Date cannot be represented in JSON Schema');
  });

  it('types execute with the output of the schema', () => {
    const parse = defineTool({
      name: 'parse',
      description: 'Count characters.',
      inputSchema: z.object({ text: z.string().transform((text) => text.length) }),
      execute: (input) => input.text + 1,
    });

    expect(parse.execute({ text: 4 }, undefined as never)).toBe(5);
  });
});

describe('tool definitions in TypeScript', () => {
  it('type guardrails written after execute with the input and the output of the tool', async () => {
    const lookup = tool({
      name: 'lookup',
      description: 'Find a customer.',
      input: z.object({ email: z.email() }),
      execute: (input) => ({ email: input.email, phone: '+1 555 0100' }),
      guardrails: {
        before: (input) => (input.email.endsWith('@internal.test') ? { allow: false, reason: 'internal' } : undefined),
        after: (output) => ({ output: { ...output, phone: '***' } }),
      },
    });

    const output = await lookup.execute({ email: 'a@b.test' }, undefined as never);

    expect(output.phone).toBe('+1 555 0100');
    expect(lookup.guardrails?.after?.(output, undefined as never, lookup)).toEqual({
      output: { email: 'a@b.test', phone: '***' },
    });
  });
});
