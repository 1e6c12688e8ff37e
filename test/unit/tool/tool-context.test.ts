import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger, createToolContext, defaultLogger, withLogAttributes } from '../../../src/tool/tool-context.js';
import { recordingLogger } from './build-tools.js';

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

function capture(options: Parameters<typeof createLogger>[0] = {}) {
  const lines: string[] = [];
  const logger = createLogger({ ...options, write: (line) => lines.push(line) });
  return { logger, lines, records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('createToolContext', () => {
  it('fills in tenant, config, logger and a signal that is not aborted', () => {
    const ctx = createToolContext();

    expect(ctx.tenantId).toBe('default');
    expect(ctx.config).toEqual({});
    expect(ctx.logger).toBe(defaultLogger);
    expect(ctx.signal.aborted).toBe(false);
  });

  it('keeps what it is given, and defaults what is given as undefined', () => {
    const logger = recordingLogger();
    const signal = AbortSignal.abort();

    const ctx = createToolContext({
      tenantId: undefined,
      userId: 'u',
      idempotencyKey: 'k',
      config: { a: 1 },
      logger,
      signal,
    });

    expect(ctx).toEqual({ tenantId: 'default', userId: 'u', idempotencyKey: 'k', config: { a: 1 }, logger, signal });
  });
});

describe('createLogger', () => {
  it('writes one JSON line per record with time, level, message and attributes', () => {
    const { logger, lines, records } = capture({ level: 'debug', attributes: { service: 'billing' } });

    logger.info('charged', { amount: 5, service: 'override' });

    expect(lines[0]?.endsWith('}\n')).toBe(true);
    expect(records()).toEqual([
      { time: expect.any(String) as unknown, level: 'info', message: 'charged', service: 'override', amount: 5 },
    ]);
  });

  it('drops records below its level', () => {
    const { logger, records } = capture({ level: 'warn' });

    logger.debug('d');
    logger.info('i');
    logger.warn('w');
    logger.error('e');

    expect(records().map((record) => record.level)).toEqual(['warn', 'error']);
  });

  it('follows RELAY_E_LOG_LEVEL, info when unset or unknown, silent when asked', () => {
    const { logger, records } = capture();

    vi.stubEnv('RELAY_E_LOG_LEVEL', 'debug');
    logger.debug('shown');
    vi.stubEnv('RELAY_E_LOG_LEVEL', '');
    logger.debug('hidden');
    vi.stubEnv('RELAY_E_LOG_LEVEL', 'silent');
    logger.error('hidden too');

    expect(records().map((record) => record.message)).toEqual(['shown']);
  });

  it('says once that a RELAY_E_LOG_LEVEL naming no level logs info and above, instead of dropping records unsaid', () => {
    const { logger, records } = capture();

    vi.stubEnv('RELAY_E_LOG_LEVEL', 'verbose');
    logger.debug('hidden');
    logger.info('info shown');
    logger.debug('hidden again');

    expect(records().map(({ level, message }) => ({ level, message }))).toEqual([
      {
        level: 'warn',
        message:
          "RELAY_E_LOG_LEVEL 'verbose' is not a level (debug, info, warn, error, silent); logging info and above",
      },
      { level: 'info', message: 'info shown' },
    ]);
  });

  it('never lets a field it cannot serialise throw, and keeps the stack of errors', () => {
    const { logger, records } = capture({ level: 'debug' });
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;

    logger.error('failed', { error: new Error('boom'), count: 2n });
    logger.error('cycle', { cycle });

    const [withError, withCycle] = records();
    expect(withError).toMatchObject({ error: { name: 'Error', message: 'boom' }, count: '2' });
    expect(String((withError?.error as { stack?: unknown }).stack)).toContain('boom');
    expect(withCycle).toMatchObject({ message: 'cycle', logError: expect.stringContaining('circular') as unknown });
  });

  it('cuts any text over maxTextBytes with a note of its size, an error thrown with a whole HTML page among them', () => {
    const page = `<html>${'<p>Service unavailable</p>'.repeat(10_000)}</html>`;
    const { logger, lines, records } = capture({ maxTextBytes: 1_000 });

    logger.warn('Tool execution failed', { toolName: 'flaky', body: page, error: new Error(page) });

    expect(Buffer.byteLength(lines[0] ?? '')).toBeLessThan(4_000);
    const record = records()[0] as { body: string; error: { message: string; stack: string }; toolName: string };
    expect(record.toolName).toBe('flaky');
    for (const text of [record.body, record.error.message, record.error.stack]) {
      expect(Buffer.byteLength(JSON.stringify(text))).toBeLessThanOrEqual(1_000);
      expect(text).toMatch(/ … \[cut from \d+ bytes\]$/);
    }
    expect(record.body).toMatch(
      new RegExp(`^<html><p>Service unavailable</p>.* … \\[cut from ${page.length} bytes\\]$`),
    );
  });

  it('keeps a record of ordinary size whole by default, and bounds each text to 8 KiB', () => {
    const { logger, records } = capture();

    logger.info('ok', { note: 'x'.repeat(8_000), long: 'y'.repeat(9_000) });

    const [record] = records() as Array<{ note: string; long: string }>;
    expect(record?.note).toBe('x'.repeat(8_000));
    expect(Buffer.byteLength(JSON.stringify(record?.long))).toBeLessThanOrEqual(8_192);
  });

  it('writes to stderr by default', () => {
    const write = vi.spyOn(process.stderr, 'write').mockReturnValue(true);

    createLogger({ level: 'info' }).info('to stderr');

    expect(write).toHaveBeenCalledWith(expect.stringContaining('"message":"to stderr"'));
  });
});

describe('withLogAttributes', () => {
  it('adds its attributes to every record, the record own ones winning', () => {
    const logger = recordingLogger();

    withLogAttributes(logger, { toolName: 'add', runId: 'r' }).warn('slow', { runId: 'mine' });

    expect(logger.records).toEqual([
      { level: 'warn', message: 'slow', attributes: { toolName: 'add', runId: 'mine' } },
    ]);
  });
});
