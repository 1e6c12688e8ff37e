import { setTimeout } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { tellUnavailability } from '../../../src/client/watch-run.js';
import type { WorkflowTaskFailure } from '../../../src/client/workflow-task-failure.js';
import { RelayError } from '../../../src/shared/errors.js';
import { latch } from '../../helpers/latch.js';

// What `watch` tells its caller of a run that cannot answer, look by look (the hub's and `relay-e run`'s tests follow
// the same telling through their callers).

const refusal = new RelayError('run_unavailable', "Run 'run_1' cannot answer right now: no worker polled");
const failing: WorkflowTaskFailure = {
  message: 'broken on purpose',
  nondeterministic: false,
  workflowCodeFailed: true,
};

/** A caller's callbacks, recording what it was told, over a history whose workflow task fails or (`taskFails: false`) not. */
function caller({ taskFails = true } = {}) {
  const failure = taskFails ? failing : undefined;
  const told: string[] = [];
  let reads = 0;
  const readFailure = async () => {
    reads += 1;
    return failure;
  };
  const callbacks = {
    onUnavailable: (error: RelayError) => told.push(`unavailable: ${error.message}`),
    onAvailable: () => told.push('available'),
  };
  return { told, reads: () => reads, readFailure, callbacks };
}

describe('what watch tells of a run that cannot answer', () => {
  it('says why once a stretch, read once from its history, then that it answers', async () => {
    const { told, reads, readFailure, callbacks } = caller();
    const telling = tellUnavailability('run_1', callbacks, readFailure);
    telling.refused(refusal);
    telling.refused(refusal);
    await setTimeout(10);
    telling.refused(refusal);
    telling.answered();
    telling.answered();
    expect(told).toEqual([
      "unavailable: Run 'run_1' cannot answer: its workflow task fails on the workers (broken on purpose), and they " +
        'take it again until one completes it.',
      'available',
    ]);
    expect(reads()).toBe(1);
  });

  it('passes on the refusal as it is when the history names no failure (no worker polls)', async () => {
    const { told, readFailure, callbacks } = caller({ taskFails: false });
    const telling = tellUnavailability('run_1', callbacks, readFailure);
    telling.refused(refusal);
    await setTimeout(10);
    expect(told).toEqual([`unavailable: ${refusal.message}`]);
  });

  it('tells neither a reason read after the run answered again nor that it answers', async () => {
    const reading = latch();
    const { told, callbacks } = caller();
    const telling = tellUnavailability('run_1', callbacks, async () => {
      reading.reached();
      await reading.released;
      return failing;
    });
    telling.refused(refusal);
    await reading.started;
    telling.answered();
    reading.release();
    await setTimeout(10);
    expect(told).toEqual([]);
  });

  it('reads no history for a caller that does not ask why', async () => {
    const { told, reads, readFailure, callbacks } = caller();
    const telling = tellUnavailability('run_1', { onAvailable: callbacks.onAvailable }, readFailure);
    telling.refused(refusal);
    await setTimeout(10);
    telling.answered();
    expect(reads()).toBe(0);
    expect(told).toEqual([]);
  });

  it('says the run answers at its first answer when the caller found it could not, and why at once given the error', async () => {
    const flagged = caller();
    const flaggedTelling = tellUnavailability(
      'run_1',
      { ...flagged.callbacks, unavailableAtStart: true },
      flagged.readFailure,
    );
    flaggedTelling.answered();
    expect(flagged.told).toEqual(['available']);
    expect(flagged.reads()).toBe(0);

    const given = caller();
    const givenTelling = tellUnavailability(
      'run_1',
      { ...given.callbacks, unavailableAtStart: refusal },
      given.readFailure,
    );
    await setTimeout(10);
    expect(given.told).toEqual([expect.stringMatching(/^unavailable: .*broken on purpose/)]);
    givenTelling.answered();
    expect(given.told.at(-1)).toBe('available');
    expect(given.reads()).toBe(1);
  });
});
