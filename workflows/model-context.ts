import type {
  MessageReplacement,
  ModelContext,
  ModelContextTools,
  StoredModelContext,
  TranscriptMessage,
} from '../src/shared/transcript.js';
import type { PayloadRef } from '../src/store/payload-store.js';

/**
 * What a run's model calls send: the messages added since the context the worker stored at the last call (its
 * tools go with it), or the whole transcript with the tools by the reference stored at the execution's first call.
 * The run keeps the whole transcript itself (compaction and continue-as-new need it); when the stored context is no
 * longer a prefix of it (compaction replaced a message), or there is none yet, the call carries everything.
 * With `withAnswer` (the lean-history rules, patch `one-marker-for-every-rule`) the stored context ends with the
 * model's answer, which the run puts in its transcript with {@link answered}: the next call sends only what followed
 * it, and after a compaction the messages it replaced, so no call but an execution's first carries the whole
 * transcript.
 */
export class ModelContextTracker {
  /** The messages the stored context holds, as the objects the transcript held when they were sent. */
  private sent: readonly TranscriptMessage[] = [];
  private context: PayloadRef | undefined;
  private tools: PayloadRef | undefined;
  private queue: string | undefined;
  private queueStartMs: number | undefined;

  constructor(private readonly withAnswer = false) {}

  /** The context of the next call for this transcript. */
  next(transcript: readonly TranscriptMessage[], tools: () => ModelContextTools): ModelContext {
    if (this.context !== undefined && this.withAnswer && this.sent.length <= transcript.length) {
      const replace = this.replacedIn(transcript);
      const append = transcript.slice(this.sent.length);
      return { parent: this.context, ...(replace.length > 0 ? { replace } : {}), append };
    }
    if (this.context !== undefined && this.isPrefixOf(transcript)) {
      return { base: this.context, append: transcript.slice(this.sent.length) };
    }
    const toolsContext = this.tools !== undefined ? { ref: this.tools } : tools();
    return { append: [...transcript], tools: toolsContext, ...(this.withAnswer ? { withAnswer: true as const } : {}) };
  }

  /** Records what the worker stored for a call that sent `transcript` (nothing when it stored nothing). */
  remember(transcript: readonly TranscriptMessage[], stored: StoredModelContext | undefined): void {
    if (!stored) return this.forget();
    this.sent = [...transcript];
    this.context = stored.context;
    this.tools = stored.tools ?? this.tools;
    // Absent: the call came by the queue the run already uses (or the worker has none, and the run uses none).
    if (stored.workerQueue !== undefined) {
      this.queue = stored.workerQueue ?? undefined;
      this.queueStartMs = stored.workerQueueStartMs;
    }
  }

  /**
   * The task queue of the worker that stored the context, when its store is its own: the next call goes there, and
   * may wait `startMs` to be started (absent: the run's default).
   */
  get workerQueue(): { name: string; startMs?: number } | undefined {
    if (this.queue === undefined) return undefined;
    return { name: this.queue, ...(this.queueStartMs !== undefined ? { startMs: this.queueStartMs } : {}) };
  }

  /** Records the model's answer as the run put it in its transcript: the stored context ends with it. */
  answered(message: TranscriptMessage): void {
    if (this.withAnswer && this.context !== undefined) this.sent = [...this.sent, message];
  }

  /** Drops what the worker stored, so the next call carries everything: the worker no longer holds it. */
  forget(): void {
    this.sent = [];
    this.context = undefined;
    this.tools = undefined;
    this.queue = undefined;
    this.queueStartMs = undefined;
  }

  /** The messages compaction put in place of sent ones, by index (identity tells, as for {@link isPrefixOf}). */
  private replacedIn(transcript: readonly TranscriptMessage[]): MessageReplacement[] {
    const replaced: MessageReplacement[] = [];
    this.sent.forEach((message, index) => {
      const now = transcript[index];
      if (now !== undefined && now !== message) replaced.push({ index, message: now });
    });
    return replaced;
  }

  /** Compaction puts a new message object in place of one it elides, so identity tells what changed. */
  private isPrefixOf(transcript: readonly TranscriptMessage[]): boolean {
    return this.sent.length <= transcript.length && this.sent.every((message, index) => transcript[index] === message);
  }
}
