import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow/index.js';
import type { ModelTextProgress, RunEvent } from '../shared/run-types.js';

/** The text a run's model is streaming right now, read from its pending model call's heartbeat; none otherwise. */
export async function readModelProgress(
  client: Client,
  description: WorkflowExecutionDescription,
): Promise<ModelTextProgress | undefined> {
  const modelCall = description.raw.pendingActivities?.find((activity) => activity.activityType?.name === 'callModel');
  const payloads = modelCall?.heartbeatDetails?.payloads;
  if (!payloads?.length) return undefined;
  const progress = await decodeFromPayloadsAtIndex<unknown>(client.options.loadedDataConverter, 0, payloads);
  return isModelTextProgress(progress) ? progress : undefined;
}

/** Where a follower stands in a run's streamed text: turns each newer progress into the delta it has not seen. */
export class ModelDeltaTracker {
  private seen?: { step: number; attempt: number; length: number };

  /**
   * The `model_delta` for what `progress` adds to what this follower saw, if anything. The first progress a
   * follower sees only sets where it stands when it joined mid-stream (`joinedMidStream`): it gets the deltas from
   * then on, and the whole text with the step's `model_responded`.
   */
  next(progress: ModelTextProgress | undefined, lastSeq: number, joinedMidStream: boolean): RunEvent | undefined {
    if (!progress) return undefined;
    const sameStream = this.seen?.step === progress.step && this.seen.attempt === progress.attempt;
    const offset = sameStream ? (this.seen?.length ?? 0) : joinedMidStream ? progress.text.length : 0;
    this.seen = { step: progress.step, attempt: progress.attempt, length: Math.max(offset, progress.text.length) };
    if (progress.text.length <= offset) return undefined;
    return {
      type: 'model_delta',
      seq: lastSeq,
      at: new Date().toISOString(),
      step: progress.step,
      attempt: progress.attempt,
      offset,
      text: progress.text.slice(offset),
    };
  }
}

function isModelTextProgress(value: unknown): value is ModelTextProgress {
  if (typeof value !== 'object' || value === null) return false;
  const progress = value as Partial<ModelTextProgress>;
  return typeof progress.step === 'number' && typeof progress.attempt === 'number' && typeof progress.text === 'string';
}
