import type { ToolResult } from './tool-result.js';
import type { CatalogRequest, CatalogSnapshot, JsonSchema } from './tool-catalog.js';
import type { PayloadRef } from '../store/payload-store.js';
import type { StoredModelText } from './stored-output.js';

/** A tool call as proposed by the model; `input` may be an object or a JSON string, and is unchecked. */
export interface ProposedToolCall {
  id?: string;
  name: string;
  input: unknown;
}

/** A tool call the run has given an id unique within the run. */
export interface ToolCall {
  /** The run's own id for the call: what decisions, events, the snapshot and idempotency keys use. */
  id: string;
  name: string;
  input: unknown;
  /** The id the provider sent, when it differs from `id`; sent back to the provider, which pairs results by it. */
  providerCallId?: string;
}

export type TranscriptMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | {
      role: 'assistant';
      content: string;
      toolCalls?: ToolCall[];
      /** The text itself, when it is kept in the payload store (`content` is then empty). */
      storedContent?: StoredModelText;
    }
  | { role: 'tool'; toolCallId: string; toolName: string; result: ToolResult; providerCallId?: string };

/** A tool as the model sees it. */
export interface ModelToolSpec {
  name: string;
  description: string;
  inputSchema: JsonSchema;
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

/** Sampling settings of a run's model calls; each provider sends the ones its API knows. */
export interface ModelSettings {
  /** 0–2; lower is more deterministic. */
  temperature?: number;
  /** Nucleus sampling, in (0, 1]. */
  topP?: number;
  /** The most tokens one model call may generate. */
  maxOutputTokens?: number;
  /** For providers that support repeatable sampling. */
  seed?: number;
  /** Text that ends generation when produced (at most 16). */
  stopSequences?: string[];
}

/** What the run sends to the model activity. */
export interface ModelRequest {
  /** `provider:model`, e.g. `openai:gpt-4.1-mini` or `scripted:demo`. */
  model: string;
  messages: TranscriptMessage[];
  tools: ModelToolSpec[];
  /** The 1-based step this call belongs to. */
  step: number;
  runId: string;
  tenantId: string;
  /** The run's `modelSettings`, when it has any. */
  settings?: ModelSettings;
}

/**
 * What the run sends to the model activity when the worker's payload store holds the context: the transcript as the
 * stored context of an earlier call (its messages and its tools) plus what is new since, so a call's input in
 * history grows with one step, not with the whole run.
 */
export interface ModelContextRequest extends Omit<ModelRequest, 'messages' | 'tools'> {
  context: ModelContext;
}

/**
 * A call's transcript and tools: the context stored at `base` (its messages followed by `append`, its tools), or
 * the whole transcript in `append` with the tools, by reference once stored. Runs under
 * the lean-history rules send `parent` instead of `base`, or `withAnswer` with a whole transcript: the
 * context the worker stores then ends with the model's own answer, so the next call appends only the tool results,
 * and after a compaction sends the messages it put in place of stored ones (`replace`) instead of everything.
 */
export type ModelContext =
  | { base: PayloadRef; append: TranscriptMessage[] }
  | { parent: PayloadRef; replace?: MessageReplacement[]; append: TranscriptMessage[] }
  | {
      append: TranscriptMessage[];
      tools: ModelContextTools;
      withAnswer?: true;
    };

/**
 * A whole context's tools: by the ref stored at an earlier call, whole, or (a run's first call under the rule
 * `catalog-in-first-model-call`) to be read from the worker's catalog by the model activity, which returns it.
 */
export type ModelContextTools = { ref: PayloadRef } | { specs: ModelToolSpec[] } | { catalog: CatalogRequest };

/** A message compaction put in place of the one at `index` of the stored context. */
export interface MessageReplacement {
  index: number;
  message: TranscriptMessage;
}

/**
 * How long a model call sent to the worker that stored the run's context may wait to be started there when that worker
 * names no other wait (`workerQueueStartMs`): past it, the worker is taken for gone and the call goes to the shared
 * queue with the whole context.
 */
export const defaultModelCallStartMs = 5_000;

/** What the worker stored for one call: its context, and its tools when the call sent them whole. */
export interface StoredModelContext {
  context: PayloadRef;
  tools?: PayloadRef;
  /**
   * A task queue only the worker that stored the context polls, when its store is its own: the run sends its next
   * model calls there, so they find the context (see `keepModelCallsOnWorker`). Absent when the call came by that
   * queue already (the run keeps it) or the worker has none; `null` when that worker is shutting down (the run goes
   * back to the shared queue).
   */
  workerQueue?: string | null;
  /**
   * How long, in milliseconds, a call sent to `workerQueue` may wait to be started there before the run takes that
   * worker for gone, when the worker sets another wait than the default 5 seconds (`modelCallStartTimeout`).
   */
  workerQueueStartMs?: number;
}

/**
 * What the model activity returns: the model's answer and, for a {@link ModelContextRequest}, what it stored; for a
 * call that asked the catalog, the catalog too, or only the refusal (the model was not called).
 */
export type ModelCallResult = ModelResponse & { stored?: StoredModelContext; catalog?: CatalogSnapshot };

/** What a model answered: text, tool calls, or both. */
export interface ModelResponse {
  text?: string;
  /** In place of `text`, when the model activity kept it in the payload store (see `StoredModelText`). */
  storedText?: StoredModelText;
  toolCalls?: ProposedToolCall[];
  usage?: TokenUsage;
  finishReason?: string;
}
