import { inspect } from 'node:util';
import { ApplicationFailure } from '@temporalio/common';
import type { Logger as TemporalLogger, LogLevel, LogMetadata } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createActivities } from '../../../activities/index.js';
import type { ExecuteToolInput } from '../../../activities/index.js';
import { ModelRegistry } from '../../../src/model/model-registry.js';
import type { ToolResult } from '../../../src/shared/tool-result.js';
import { runTool } from '../../../src/testing/run-tool.js';
import type { ToolDefinition } from '../../../src/tool/define-tool.js';
import { defineTool } from '../../../src/tool/define-tool.js';
import type { ToolCallRequest, ToolExecutionOptions } from '../../../src/tool/tool-executor.js';
import { ToolExecutor } from '../../../src/tool/tool-executor.js';
import { ToolRegistry } from '../../../src/tool/tool-registry.js';

const pem = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----';
const credential = '{"type":"service_account","private_key":"abc123SECRETxyz"}';
const token = 'sk-live-ABCDEFGHIJKLMNOP';
const secrets = { PEM: pem, CREDENTIAL: credential, TOKEN: token, SHORT: 'k3y' };

/** Every 8-character piece of each secret, as written and as JSON escapes it: none may show in a result. */
function piecesOf(...values: string[]): string[] {
  const forms = values.flatMap((value) => [value, JSON.stringify(value).slice(1, -1)]);
  return forms.flatMap((form) => Array.from({ length: form.length - 7 }, (_, start) => form.slice(start, start + 8)));
}

/** The pieces of `values` found in `texts`; empty when nothing of them shows. */
function leaked(texts: string[], ...values: string[]): string[] {
  return piecesOf(...values).filter((piece) => texts.some((text) => text.includes(piece)));
}

/** What a text takes in history: a JSON string, quotes and escapes included. */
const storedSize = (text: unknown) => Buffer.byteLength(JSON.stringify(text), 'utf8');

/** A tool that returns `output(config)` and cuts it at `maxResultBytes`. */
function echoTool(maxResultBytes: number, output: (config: Record<string, unknown>) => unknown): ToolDefinition {
  return defineTool({
    name: 'echo_config',
    description: 'Echoes its config.',
    inputSchema: z.object({}),
    maxResultBytes,
    execute: (_input, ctx) => output(ctx.config),
  });
}

/** A tool that throws `message(token)` and cuts its error message at `maxResultBytes`. */
function throwingTool(message: (secret: string) => string, maxResultBytes?: number): ToolDefinition {
  return defineTool({
    name: 'bank',
    description: 'Calls the bank with its token.',
    inputSchema: z.object({}),
    ...(maxResultBytes !== undefined ? { maxResultBytes } : {}),
    execute: () => {
      throw new Error(message(token), { cause: new Error(`request sent with Authorization: Bearer ${token}`) });
    },
  });
}

/** The cut JSON text of `result`, which must be a success cut to its limit. */
function cutTextOf(result: ToolResult): string {
  expect(result).toMatchObject({ success: true, truncated: true });
  return result.success && typeof result.data === 'string' ? result.data : '';
}

/** The activity's failure for a call that is expected to fail the attempt. */
async function failureOf(result: Promise<ToolResult>): Promise<ApplicationFailure> {
  const failure = await result.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(failure).toBeInstanceOf(ApplicationFailure);
  return failure as ApplicationFailure;
}

/** A Temporal logger that keeps each record as `inspect` prints it, its error's stack, cause and fields included. */
function capturingLogger(): { logger: TemporalLogger; lines: string[] } {
  const lines: string[] = [];
  const log = (level: LogLevel, message: string, meta?: LogMetadata) =>
    lines.push(`${level} ${message} ${inspect(meta, { depth: null })}`);
  const logger: TemporalLogger = {
    log,
    trace: (message, meta) => log('TRACE', message, meta),
    debug: (message, meta) => log('DEBUG', message, meta),
    info: (message, meta) => log('INFO', message, meta),
    warn: (message, meta) => log('WARN', message, meta),
    error: (message, meta) => log('ERROR', message, meta),
  };
  return { logger, lines };
}

describe('the tool activity’s secrets at its size limits', () => {
  it('are hidden from an output cut to maxResultBytes, quotes and newlines included', async () => {
    const tool = echoTool(400, (config) => ({
      pem: config['pem'],
      credential: config['credential'],
      filler: 'x'.repeat(600),
    }));

    const result = await runTool(
      tool,
      {},
      { config: { pem: { $secret: 'PEM' }, credential: { $secret: 'CREDENTIAL' } }, secrets },
    );

    const text = cutTextOf(result);
    expect(text).toMatch(/^\{"pem":"\[secret\]","credential":"\[secret\]","filler":"x+$/);
    expect(leaked([JSON.stringify(result), text], pem, credential)).toEqual([]);
    expect(storedSize(text)).toBeLessThanOrEqual(400);
  });

  it('leave no prefix of a token that the cut would have split', async () => {
    const tool = echoTool(60, (config) => `${'y'.repeat(40)}${String(config['token'])}${'z'.repeat(40)}`);

    const result = await runTool(tool, {}, { config: { token: { $secret: 'TOKEN' } }, secrets });

    const text = cutTextOf(result);
    expect(JSON.stringify(result)).not.toContain('sk-live');
    expect(storedSize(text)).toBeLessThanOrEqual(60);
  });

  it('are hidden before the cut, so a short secret’s [secret] does not push the output past the limit', async () => {
    const tool = echoTool(100, (config) => `${String(config['short'])} `.repeat(50));

    const result = await runTool(tool, {}, { config: { short: { $secret: 'SHORT' } }, secrets });

    const text = cutTextOf(result);
    expect(text).toMatch(/^"(\[secret\] )+/);
    expect(JSON.stringify(result)).not.toContain('k3y');
    expect(storedSize(text)).toBeLessThanOrEqual(100);
  });

  it('are hidden from a thrown error whose message is cut to the bound, token split or not', async () => {
    const tool = throwingTool((secret) => `${'x'.repeat(60)} ${secret} was rejected ${'y'.repeat(200)}`, 100);

    const failure = await failureOf(runTool(tool, {}, { config: { token: { $secret: 'TOKEN' } }, secrets }));

    expect(failure.type).toBe('tool_execution_failed');
    expect(failure.message).toMatch(/^x{60} \[secret\] .* … \[cut from \d+ bytes\]$/);
    expect(failure.message).not.toContain('sk-live');
    expect(storedSize(failure.message)).toBeLessThanOrEqual(100);
  });

  it('are hidden from the executor’s log line for a tool that threw, its error’s stack and cause included', async () => {
    const { logger, lines } = capturingLogger();
    const tool = throwingTool((secret) => `401 from bank: token ${secret} rejected`);

    const failure = await failureOf(runTool(tool, {}, { config: { token: { $secret: 'TOKEN' } }, secrets, logger }));

    expect(failure.message).toBe('401 from bank: token [secret] rejected');
    const logged = lines.filter((line) => line.includes('Tool execution failed'));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain('401 from bank: token [secret] rejected');
    expect(lines.filter((line) => line.includes(token))).toEqual([]);
  });
});

/** An executor that leaves hiding secrets to its caller, as one built before the `redact` hook would. */
class ExecutorWithoutRedact extends ToolExecutor {
  override executeCall(call: ToolCallRequest, options: ToolExecutionOptions = {}): Promise<ToolResult> {
    // eslint-disable-next-line @typescript-eslint/no-unused-vars -- left out on purpose
    const { redact, ...others } = options;
    return super.executeCall(call, others);
  }
}

/** Runs one call of `tool` through the tool activity with an executor that hides nothing itself. */
async function runWithoutExecutorRedaction(tool: ToolDefinition): Promise<ToolResult> {
  const registry = new ToolRegistry([tool]);
  const activities = createActivities({
    registry,
    executor: new ExecutorWithoutRedact(registry),
    models: new ModelRegistry({}),
    secrets,
  });
  const environment = new MockActivityEnvironment(
    { activityType: 'executeTool', workflowType: 'agentRun' },
    { logger: new DefaultLogger('ERROR') },
  );
  const call: ExecuteToolInput = {
    toolName: tool.name,
    toolCallId: 'call_1_0',
    input: {},
    idempotencyKey: 'run_1/first-execution/call_1_0',
    tenantId: 'acme',
    runId: 'run_1',
    config: { key: { $secret: 'PEM' }, token: { $secret: 'TOKEN' } },
  };
  return environment.run((input: ExecuteToolInput) => activities.executeTool(input), call);
}

describe('the tool activity’s backstop, for an executor that leaves secrets in', () => {
  it('hides a secret escaped in a cut output’s JSON text, and drops a token cut at its end', async () => {
    const tool = echoTool(160, (config) => ({
      key: config['key'],
      tail: `${'y'.repeat(30)}${String(config['token'])}`,
    }));

    const result = await runWithoutExecutorRedaction(tool);

    const text = cutTextOf(result);
    expect(text).toMatch(/^\{"key":"\[secret\]","tail":"y+$/);
    expect(leaked([JSON.stringify(result), text], pem)).toEqual([]);
    expect(JSON.stringify(result)).not.toContain('sk-');
  });

  it('drops a token cut at the end of a bounded error message, keeping the note of its size', async () => {
    const tool = throwingTool((secret) => `${'x'.repeat(60)} ${secret} was rejected ${'y'.repeat(200)}`, 100);

    const failure = await failureOf(runWithoutExecutorRedaction(tool));

    expect(failure.message).toMatch(/^x{60} {2}… \[cut from \d+ bytes\]$/);
  });
});
