import type { Context } from '@temporalio/activity';
import { utf8ByteLength } from '../src/shared/payload-limits.js';
import { modelDeltaBatchMs } from '../src/shared/run-types.js';
import type { ModelTextProgress } from '../src/shared/run-types.js';

/**
 * The most streamed text a heartbeat carries; past it the stream stops growing and followers get the rest with
 * the step's durable text (heartbeat details are one payload, under Temporal's 2 MiB blob limit).
 */
const maxStreamedBytes = 256 * 1024;

/** Collects a model call's streamed text and heartbeats it, batched, as {@link ModelTextProgress}. */
export interface ModelTextStream {
  push(delta: string): void;
  /** The text so far, for the activity's regular heartbeat (a heartbeat without it would clear it). */
  progress(): ModelTextProgress | undefined;
  stop(): void;
}

export function createModelTextStream(context: Context, step: number): ModelTextStream {
  let text = '';
  let bytes = 0;
  // Once a delta does not fit, none after it is taken: a smaller later one would leave a hole in the text.
  let full = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const progress = () => (text === '' ? undefined : { step, attempt: context.info.attempt, text });
  return {
    push(delta) {
      const deltaBytes = utf8ByteLength(delta);
      full ||= bytes + deltaBytes > maxStreamedBytes;
      if (full) return;
      text += delta;
      bytes += deltaBytes;
      timer ??= setTimeout(() => {
        timer = undefined;
        context.heartbeat(progress());
      }, modelDeltaBatchMs);
    },
    progress,
    stop() {
      clearTimeout(timer);
    },
  };
}
