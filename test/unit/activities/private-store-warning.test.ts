import { MockActivityEnvironment } from '@temporalio/testing';
import type { LogLevel, LogMetadata, Logger } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { createActivities } from '../../../activities/index.js';
import { ModelRegistry } from '../../../src/model/model-registry.js';
import type { ModelContextRequest } from '../../../src/shared/transcript.js';
import { createMemoryPayloadStore } from '../../../src/store/memory-payload-store.js';
import { scriptedModel } from '../../../src/testing/scripted-model.js';
import { ToolExecutor } from '../../../src/tool/tool-executor.js';
import { ToolRegistry } from '../../../src/tool/tool-registry.js';

/** A logger that keeps what the activities log, by level. */
function recordingLogger() {
  const lines: Array<{ level: LogLevel; message: string; meta?: LogMetadata }> = [];
  const at =
    (level: LogLevel) =>
    (message: string, meta?: LogMetadata): void => {
      lines.push({ level, message, ...(meta ? { meta } : {}) });
    };
  const logger: Logger = {
    log: (level, message, meta) => at(level)(message, meta),
    trace: at('TRACE'),
    debug: at('DEBUG'),
    info: at('INFO'),
    warn: at('WARN'),
    error: at('ERROR'),
  };
  return { logger, warnings: () => lines.filter((line) => line.level === 'WARN') };
}

/** A call that refers to a context no store holds, as a call landing on another worker than the last one does. */
const callReferringToAnotherWorkersContext: ModelContextRequest = {
  model: 'scripted:test',
  step: 2,
  runId: 'run-1',
  tenantId: 'tenant-a',
  context: { parent: `sha256:${'0'.repeat(64)}`, append: [] },
};

async function missTwice(withStore: boolean) {
  const registry = new ToolRegistry([]);
  const activities = createActivities({
    registry,
    executor: new ToolExecutor(registry),
    models: new ModelRegistry({ scripted: scriptedModel([{ text: 'done' }]) }),
    ...(withStore ? { payloadStore: createMemoryPayloadStore() } : {}),
  });
  const { logger, warnings } = recordingLogger();
  const environment = new MockActivityEnvironment({ taskQueue: 'agents' }, { logger });
  for (let attempt = 0; attempt < 2; attempt++) {
    const callModel = (request: ModelContextRequest) => activities.callModel(request);
    await expect(environment.run(callModel, callReferringToAnotherWorkersContext)).rejects.toMatchObject({
      type: 'payload_not_found',
      nonRetryable: true,
    });
  }
  // The SDK warns of every failed activity too; only the store's own warning counts here.
  return warnings().filter((line) => line.message.includes('payload store'));
}

describe('a worker whose payload store is its own memory', () => {
  it('tells the operator once, naming the task queue and the fix, when model calls miss their context', async () => {
    const warnings = await missTwice(false);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toContain("task queue 'agents'");
    expect(warnings[0]?.message).toContain('the same payloadStore');
  });

  it('says nothing of the kind when the deployment gave the worker its store', async () => {
    expect(await missTwice(true)).toEqual([]);
  });
});
