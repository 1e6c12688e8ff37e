import type {
  ModelContextRequest,
  ModelToolSpec,
  StoredModelContext,
  TranscriptMessage,
} from '../src/shared/transcript.js';

/**
 * What a run's model calls send: the messages added since the context the worker stored at the last call, and the
 * tools by the reference it stored them under. The run keeps the whole transcript itself (compaction and
 * continue-as-new need it); when the stored context is no longer a prefix of it (compaction replaced a message),
 * or there is none yet, the call carries everything.
 */
export class ModelContextTracker {
  /** The messages the stored context holds, as the objects the transcript held when they were sent. */
  private sent: readonly TranscriptMessage[] = [];
  private stored: StoredModelContext | undefined;

  /** The context and tools of the next call for this transcript. */
  next(
    transcript: readonly TranscriptMessage[],
    tools: () => ModelToolSpec[],
  ): Pick<ModelContextRequest, 'context' | 'tools'> {
    const { stored } = this;
    const toolsPart = stored ? { ref: stored.tools } : { specs: tools() };
    if (!stored || !this.isPrefixOf(transcript)) return { context: { append: [...transcript] }, tools: toolsPart };
    return { context: { base: stored.context, append: transcript.slice(this.sent.length) }, tools: toolsPart };
  }

  /** Records what the worker stored for a call that sent `transcript` (nothing when it stored nothing). */
  remember(transcript: readonly TranscriptMessage[], stored: StoredModelContext | undefined): void {
    this.sent = stored ? [...transcript] : [];
    this.stored = stored;
  }

  /** Drops the stored context, so the next call carries everything: the worker no longer holds it. */
  forget(): void {
    this.remember([], undefined);
  }

  /** Compaction puts a new message object in place of one it elides, so identity tells what changed. */
  private isPrefixOf(transcript: readonly TranscriptMessage[]): boolean {
    return this.sent.length <= transcript.length && this.sent.every((message, index) => transcript[index] === message);
  }
}
