import type { ModelProvider, ModelCall } from '../model/model-provider.js';
import { ModelProviderError } from '../model/model-provider.js';
import { toJsonText } from '../shared/payload-limits.js';
import { errorMessage } from '../shared/error-message.js';
import type { ModelResponse, ProposedToolCall } from '../shared/transcript.js';

/**
 * One scripted model turn: a final answer, or tool calls (with optional text beside them). `finishReason` is why the
 * model stopped, as providers report it through the AI SDK (`'stop'`, `'length'`, `'content-filter'`, …); by default
 * `'tool-calls'` for a turn with calls, else `'stop'`. Set it to play an answer cut off by a token limit or a filter.
 * A turn with neither text nor a call (`{ toolCalls: [] }`) fails the run: play an empty answer as `{ text: '' }`.
 */
export type ScriptedTurn = (
  { text: string; toolCalls?: undefined } | { toolCalls: ProposedToolCall[]; text?: string }
) & { finishReason?: string };

/**
 * Decides the next turn from the request, e.g. by looking at the last tool result. A throw, or an answer that is not
 * a turn, fails the run at once with a non-retryable `model_error` naming it; throw a `ModelProviderError` of your
 * own to play a provider's failure (a retryable one is retried as a provider's would be).
 */
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
      const turn = await scriptedTurn(nextTurn, call);
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

/**
 * The script's turn for `call`. Anything else the model activity would retry (eight attempts, minutes of backoff) with
 * the script run again each time, so a broken script fails the run at once instead, with the reason in its error.
 */
async function scriptedTurn(script: ScriptedTurnFunction, call: ModelCall): Promise<ScriptedTurn> {
  let turn: unknown;
  try {
    turn = await script(call);
  } catch (error) {
    if (error instanceof ModelProviderError) throw error;
    throw scriptError(call, `the script threw: ${errorMessage(error)}`, error);
  }
  if (!isTurn(turn)) {
    // `undefined` (a branch that returns nothing) has no JSON; a long answer is cut to keep the failure short.
    const what = turn === undefined ? 'undefined' : (toJsonText(turn) ?? typeof turn).slice(0, maxShownTurnLength);
    throw scriptError(call, `got ${what}, which is not a turn ({ text }, or { toolCalls } with at least one call)`);
  }
  return turn;
}

const maxShownTurnLength = 200;

function scriptError(call: ModelCall, why: string, cause?: unknown): ModelProviderError {
  return new ModelProviderError(`Scripted model failed at step ${call.step}: ${why}`, { retryable: false, cause });
}

/** Text, or at least one call: a turn with neither would end the run with an empty answer nobody scripted. */
function isTurn(value: unknown): value is ScriptedTurn {
  if (typeof value !== 'object' || value === null) return false;
  const { text, toolCalls } = value as { text?: unknown; toolCalls?: unknown };
  if (text !== undefined && typeof text !== 'string') return false;
  if (toolCalls !== undefined && !Array.isArray(toolCalls)) return false;
  return typeof text === 'string' || (Array.isArray(toolCalls) && toolCalls.length > 0);
}

function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
