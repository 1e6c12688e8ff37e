import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { toExitCode } from '../../../src/cli/cli-error.js';
import { runCommand } from '../../../src/cli/run-command.js';
import { RelayClient } from '../../../src/client/relay-client.js';
import type { WatchOptions } from '../../../src/client/relay-client.js';
import { tellUnavailability } from '../../../src/client/watch-run.js';
import type { WorkflowTaskFailure } from '../../../src/client/workflow-task-failure.js';
import { RelayError } from '../../../src/shared/errors.js';
import type { RunEvent, RunSnapshot } from '../../../src/shared/run-types.js';
import { unavailable } from '../client/fake-visibility.js';

const completed: RunEvent = {
  type: 'run_completed',
  seq: 2,
  at: '2026-12-04T12:00:01.000Z',
  step: 1,
  stopReason: 'final_answer',
};

const snapshot: RunSnapshot = {
  runId: 'run_1',
  tenantId: 'demo',
  model: 'scripted:demo',
  status: 'completed',
  stopReason: 'final_answer',
  output: 'done',
  step: 1,
  maxSteps: 10,
  pendingApprovals: [],
  usage: { inputTokens: 0, outputTokens: 0 },
  startedAt: '2026-12-04T12:00:00.000Z',
  updatedAt: '2026-12-04T12:00:01.000Z',
  lastEventSeq: 2,
};

/**
 * What `watch` does for a run that cannot answer: waits it out, telling its caller as `watch` tells it
 * ({@link tellUnavailability}, reading why with `readFailure`) each time it asks (three times here, a little apart),
 * until the run answers with its end.
 */
function unavailableThenCompleted(readFailure: () => Promise<WorkflowTaskFailure | undefined>) {
  return async function* (_runId: string, options: WatchOptions): AsyncGenerator<RunEvent> {
    const unavailable = new RelayError('run_unavailable', "Run 'run_1' cannot answer right now: no worker polled");
    const unavailability = tellUnavailability('run_1', options, readFailure);
    for (let asked = 0; asked < 3; asked++) {
      unavailability.refused(unavailable);
      await sleep(20);
    }
    unavailability.answered();
    yield completed;
  };
}

let stdout = '';
let stderr = '';

/** Connects `relay-e run` to a client with these methods over a run that completes at once. */
function connectTo(methods: Partial<Record<keyof RelayClient, unknown>> = {}) {
  const client = {
    startRun: async () => ({ runId: 'run_1' }),
    watch: async function* () {
      yield completed;
    },
    events: async () => [],
    getRun: async () => snapshot,
    close: async () => undefined,
    ...methods,
  };
  return vi.spyOn(RelayClient, 'connect').mockResolvedValue(client as unknown as RelayClient);
}

/** Runs `relay-e run` and resolves to its exit code, as the CLI's entry point reports it. */
async function run(...argv: string[]): Promise<number> {
  return runCommand.run(['--task-queue', 'shop', ...argv]).catch((error: unknown) => toExitCode(error));
}

beforeEach(() => {
  stdout = '';
  stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (stdout += String(chunk)).length > 0);
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (stderr += String(chunk)).length > 0);
});

afterEach(() => {
  vi.restoreAllMocks();
  process.removeAllListeners('SIGINT');
});

describe('relay-e run following a run', () => {
  it('prints the run id first with --json, and says once on stderr that the run waits for a worker', async () => {
    connectTo({ watch: unavailableThenCompleted(async () => undefined) });
    expect(await run('--json', 'hi')).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(JSON.parse(lines[0] ?? '')).toEqual({ runId: 'run_1', model: 'scripted:demo' });
    expect(stderr.match(/waiting for a worker on task queue 'shop' \(start one: /g)).toHaveLength(1);
    expect(lines.slice(1).every((line) => !line.includes('waiting'))).toBe(true);
  });

  it('says instead, once, that the run no longer replays and how to reset it, read from its history', async () => {
    let reads = 0;
    const failure = { message: '[TMPRL1100] x', nondeterministic: true, workflowCodeFailed: false, resetEventId: 12 };
    connectTo({
      watch: unavailableThenCompleted(async () => {
        reads += 1;
        return failure;
      }),
    });
    expect(await run('--json', 'hi')).toBe(0);
    expect(reads).toBe(1);
    expect(stderr).not.toContain('waiting for a worker');
    expect(stderr.match(/its history no longer replays/g)).toHaveLength(1);
    expect(stderr).toContain('temporal workflow reset --workflow-id run_1 --event-id 12');
  });

  it('names the error the workflow code fails the run’s task with', async () => {
    const failure = { message: 'broken on purpose', nondeterministic: false, workflowCodeFailed: true };
    connectTo({ watch: unavailableThenCompleted(async () => failure) });
    expect(await run('--json', 'hi')).toBe(0);
    expect(stderr).toContain("Run 'run_1' cannot answer: its workflow task fails on the workers (broken on purpose)");
    expect(stderr).not.toContain('waiting for a worker');
  });

  it('says nothing of a worker for a run that answers but is slow to bring its next event', async () => {
    connectTo({
      watch: async function* () {
        await sleep(100);
        yield completed;
      },
    });
    expect(await run('--json', 'hi')).toBe(0);
    expect(stderr).toBe('');
  });

  it('gives up on a Temporal server it cannot reach after a few seconds, exit 5', async () => {
    let looks = 0;
    connectTo({
      // eslint-disable-next-line require-yield
      watch: async function* () {
        looks += 1;
        throw unavailable('describe');
      },
    });
    const started = Date.now();
    expect(await run('--json', 'hi')).toBe(5);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(looks).toBeGreaterThan(1);
    expect(JSON.parse(stdout.split('\n')[0] ?? '')).toMatchObject({ runId: 'run_1' });
  }, 15_000);

  it('ends at once, with its exit code, on a failure that is not a lost connection', async () => {
    connectTo({
      // eslint-disable-next-line require-yield
      watch: async function* () {
        throw new RelayError('run_not_found', "No run 'run_1'");
      },
    });
    expect(await run('--json', 'hi')).toBe(3);
  });
});

describe('relay-e run flags', () => {
  it.each([
    [['--max-steps', 'abc'], '--max-steps must be a positive integer'],
    [['--max-steps', '0'], '--max-steps must be a positive integer'],
    [['--approval-timeout', 'soon'], 'approvalTimeout'],
    [['--max-steps', '5000'], 'maxSteps'],
  ])('refuses %j as a usage error (exit 2) before connecting to anything', async (flags, message) => {
    const connect = connectTo();
    await expect(runCommand.run(['--address', '127.0.0.1:1', ...flags, 'hi'])).rejects.toSatisfy(
      (error: unknown) => toExitCode(error) === 2 && error instanceof Error && error.message.includes(message),
    );
    expect(connect).not.toHaveBeenCalled();
  });
});
