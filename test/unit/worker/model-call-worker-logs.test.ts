import type { Logger, Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { noWorkflowsWarning, quietenNoWorkflowsWarning } from '../../../src/worker/model-call-worker.js';

describe("the model-call worker's logger", () => {
  it('logs the SDK warning that it runs no workflows (it runs none by design) at DEBUG, and every other line as it was', () => {
    const lines: string[] = [];
    const record =
      (level: string) =>
      (message: string): void => {
        lines.push(`${level} ${message}`);
      };
    const logger: Logger = {
      log: (level, message) => record(level)(message),
      trace: record('TRACE'),
      debug: record('DEBUG'),
      info: record('INFO'),
      warn: record('WARN'),
      error: record('ERROR'),
    };
    const worker = { logger } as unknown as Worker;
    quietenNoWorkflowsWarning(worker);
    const quiet = (worker as unknown as { logger: Logger }).logger;
    quiet.warn(noWorkflowsWarning, { taskQueue: 'q/model-calls/1' });
    quiet.log('WARN', noWorkflowsWarning);
    quiet.warn('Activity heartbeat failed');
    quiet.error('boom');
    quiet.info('Worker state changed');
    expect(lines).toEqual([
      `DEBUG ${noWorkflowsWarning}`,
      `DEBUG ${noWorkflowsWarning}`,
      'WARN Activity heartbeat failed',
      'ERROR boom',
      'INFO Worker state changed',
    ]);
  });
});
