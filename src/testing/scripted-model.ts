import type { ModelProvider, ModelCall } from '../model/model-provider.js';
import { ModelProviderError } from '../model/model-provider.js';
import { toJsonText } from '../shared/payload-limits.js';
import type { ModelResponse, ProposedToolCall } from '../shared/transcript.js';

/**
 * One scripted model turn: a final answer, or tool calls (with optional text beside them). `finishReason` is why the
 * model stopped, as providers report it through the AI SDK (`'stop'`, `'length'`, `'content-filter'`, …); by default
 * `'tool-calls'` for a turn with calls, else `'stop'`. Set it to play an answer cut off by a token limit or a filter.
 */
export type ScriptedTurn = (
  { text: string; toolCalls?: undefined } | { toolCalls: ProposedToolCall[]; text?: string }
) & { finishReason?: string };

/** Decides the next turn from the request, e.g. by looking at the last tool result. */
export type ScriptedTurnFunction = (request: ModelCall) => ScriptedTurn | Promise<ScriptedTurn>;

/** Options of {@link scriptedModel}. */
export interface ScriptedModelOptions {
  /**
   * How many of the latest requests {@link ScriptedModel.requests} keeps; 0 keeps none. Bounded so that a scripted
   * model serving a long-lived worker (the demo) does not hold every transcript it was ever sent.
   * @default 100
   */
  recordRequests?: number;
}

/** A scripted model provider that also records what it was sent, so tests can assert on it. */
export interface ScriptedModel extends ModelProvider {
  /** The requests it answered, oldest first (a retried call appears once per attempt). */
  readonly requests: readonly ModelCall[];
  /** The requests of one run, oldest first: `requestsOf(runId)[1]` is what the model saw at step 2. */
  requestsOf(runId: string): ModelCall[];
}

/**
 * A deterministic model for tests and demos: a function of the request, or a list of turns played by step
 * (turn 1 answers step 1, in every run). Use it as the `scripted` provider: `models: { scripted: scriptedModel([...]) }`.
 * Token usage is estimated from the text sizes (four characters a token) so usage figures are never empty.
 */
export function scriptedModel(
  script: ScriptedTurnFunction | readonly ScriptedTurn[],
  options: ScriptedModelOptions = {},
): ScriptedModel {
  const recordLimit = options.recordRequests ?? 100;
  const requests: ModelCall[] = [];
  const nextTurn: ScriptedTurnFunction =
    typeof script === 'function'
      ? script
      : (request) => {
          const turn = script[request.step - 1];
          if (!turn) {
            throw new ModelProviderError(
              `Scripted model has ${script.length} turn(s) and was asked for step ${request.step}`,
              {
                retryable: false,
              },
            );
          }
          return turn;
        };
  return {
    requests,
    requestsOf: (runId) => requests.filter((request) => request.runId === runId),
    async generate(call): Promise<ModelResponse> {
      if (recordLimit > 0) {
        requests.push(call);
        if (requests.length > recordLimit) requests.shift();
      }
      const turn = await nextTurn(call);
      const toolCalls = turn.toolCalls ?? [];
      return {
        ...(turn.text !== undefined ? { text: turn.text } : {}),
        ...(toolCalls.length > 0 ? { toolCalls } : {}),
        usage: {
          inputTokens: estimateTokens(JSON.stringify(call.messages)),
          // A turn that has no JSON (fuzz tests send some) still gets through, for the model activity to refuse.
          outputTokens: estimateTokens(toJsonText(turn) ?? ''),
        },
        finishReason: turn.finishReason ?? (toolCalls.length > 0 ? 'tool-calls' : 'stop'),
      };
    },
  };
}

function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
