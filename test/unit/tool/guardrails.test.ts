import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../../src/tool/define-tool.js';
import type { ToolGuardrails } from '../../../src/tool/guardrails.js';
import { ToolExecutor } from '../../../src/tool/tool-executor.js';
import { ToolRegistry } from '../../../src/tool/tool-registry.js';
import { recordingLogger } from './build-tools.js';

interface Transfer {
  amount: number;
}

function buildTransferTool(guardrails?: ToolGuardrails<Transfer, { card: string; amount: number }>) {
  const runs: Transfer[] = [];
  const transfer = defineTool({
    name: 'transfer',
    description: 'Move money.',
    inputSchema: z.object({ amount: z.number() }),
    ...(guardrails === undefined ? {} : { guardrails }),
    execute: (input) => {
      runs.push(input);
      return { card: '4111 1111 1111 1111', amount: input.amount };
    },
  });
  return { transfer, runs };
}

function executorFor(tool: ReturnType<typeof buildTransferTool>['transfer'], guardrails?: ToolGuardrails) {
  return new ToolExecutor(new ToolRegistry([tool]), {
    logger: recordingLogger(),
    ...(guardrails ? { guardrails } : {}),
  });
}

describe('before guardrails', () => {
  it('deny a call on the tool with a structured failure and never run execute', async () => {
    const { transfer, runs } = buildTransferTool({
      before: (input) => (input.amount > 1_000 ? { allow: false, reason: 'amount over limit' } : undefined),
    });
    const executor = executorFor(transfer);

    const denied = await executor.executeCall({ id: 'call_1', name: 'transfer', arguments: { amount: 5_000 } });
    const allowed = await executor.executeCall({ id: 'call_2', name: 'transfer', arguments: { amount: 10 } });

    expect(denied).toStrictEqual({
      success: false,
      toolName: 'transfer',
      toolCallId: 'call_1',
      error: 'Denied by guardrail: amount over limit',
      errorType: 'guardrail',
    });
    expect(allowed).toMatchObject({ success: true });
    expect(runs).toEqual([{ amount: 10 }]);
  });

  it('deny a call from the executor for every tool', async () => {
    const { transfer, runs } = buildTransferTool();
    const executor = executorFor(transfer, {
      before: (_input, ctx) =>
        ctx.tenantId === 'blocked' ? { allow: false, reason: 'tenant suspended' } : { allow: true },
    });

    const denied = await executor.execute('transfer', { amount: 1 }, { context: { tenantId: 'blocked' } });

    expect(denied).toMatchObject({ errorType: 'guardrail', error: 'Denied by guardrail: tenant suspended' });
    expect(runs).toEqual([]);
  });

  it('run the executor guardrails first, then the tool guardrails, with the tool and the parsed input', async () => {
    const order: string[] = [];
    const { transfer } = buildTransferTool({
      before: (input, _ctx, tool) => {
        order.push(`tool:${tool.name}:${input.amount}`);
      },
    });
    const executor = executorFor(transfer, {
      before: (input, _ctx, tool) => {
        order.push(`executor:${tool.name}:${JSON.stringify(input)}`);
      },
    });

    await executor.execute('transfer', '{"amount":3}');

    expect(order).toEqual(['executor:transfer:{"amount":3}', 'tool:transfer:3']);
  });

  it('stop at the first denial, so a denying executor guardrail keeps the tool guardrail from running', async () => {
    let toolGuardrailRan = false;
    const { transfer } = buildTransferTool({
      before: () => {
        toolGuardrailRan = true;
      },
    });
    const executor = executorFor(transfer, { before: async () => Promise.resolve({ allow: false, reason: 'closed' }) });

    await expect(executor.execute('transfer', { amount: 1 })).resolves.toMatchObject({
      error: 'Denied by guardrail: closed',
    });
    expect(toolGuardrailRan).toBe(false);
  });

  it('treat a guardrail that throws as a denial with the error message', async () => {
    const { transfer, runs } = buildTransferTool({
      before: () => {
        throw new Error('policy service unreachable');
      },
    });

    const result = await executorFor(transfer).execute('transfer', { amount: 1 });

    expect(result).toMatchObject({
      success: false,
      errorType: 'guardrail',
      error: 'Denied by guardrail: policy service unreachable',
    });
    expect(runs).toEqual([]);
  });

  it('give a denial without a reason a sentence anyway', async () => {
    const { transfer } = buildTransferTool({ before: () => ({ allow: false }) as never });

    await expect(executorFor(transfer).execute('transfer', { amount: 1 })).resolves.toMatchObject({
      error: 'Denied by guardrail: no reason given',
    });
  });
});

describe('after guardrails', () => {
  it('replace the output to redact it', async () => {
    const { transfer } = buildTransferTool({
      after: (output) => ({ output: { ...output, card: `**** ${output.card.slice(-4)}` } }),
    });

    const result = await executorFor(transfer).execute('transfer', { amount: 7 });

    expect(result).toStrictEqual({ success: true, toolName: 'transfer', data: { card: '**** 1111', amount: 7 } });
  });

  it('reject the output with a structured failure', async () => {
    const { transfer, runs } = buildTransferTool({
      after: () => ({ allow: false, reason: 'output leaks a card number' }),
    });

    const result = await executorFor(transfer).execute('transfer', { amount: 7 });

    expect(result).toStrictEqual({
      success: false,
      toolName: 'transfer',
      error: 'Denied by guardrail: output leaks a card number',
      errorType: 'guardrail',
    });
    expect(runs).toHaveLength(1);
  });

  it('hand each guardrail the output the one before let through, executor first', async () => {
    const { transfer } = buildTransferTool({ after: (output) => ({ output: { seen: output } }) });
    const executor = executorFor(transfer, { after: () => ({ output: 'redacted by executor' }) });

    await expect(executor.execute('transfer', { amount: 7 })).resolves.toMatchObject({
      data: { seen: 'redacted by executor' },
    });
  });

  it('treat a throw as a rejection of the output', async () => {
    const { transfer } = buildTransferTool({
      after: () => {
        throw new Error('scanner crashed');
      },
    });

    await expect(executorFor(transfer).execute('transfer', { amount: 7 })).resolves.toMatchObject({
      errorType: 'guardrail',
      error: 'Denied by guardrail: scanner crashed',
    });
  });
});
