import { toJsonText, utf8ByteLength } from './payload-limits.js';
import { isStoredModelText, isStoredToolOutput } from './stored-output.js';
import type { ToolResult } from './tool-result.js';
import type { TranscriptMessage } from './transcript.js';

/**
 * The most bytes (as JSON) of transcript a run keeps and sends to its model. A model call can carry the whole
 * transcript (the first of an execution, one after compaction, and every call of runs started before calls went by
 * reference), and Temporal refuses a payload over 2 MiB, so a run that outgrew that could not call its model
 * again; half of it leaves room for the tool schemas and the rest of the request.
 */
export const defaultMaxTranscriptBytes = 1_048_576;

/** What a compaction did, for the `transcript_compacted` event. */
export interface TranscriptCompaction {
  /** Tool results replaced with a note, oldest first. */
  elidedResults: number;
  /** Older assistant texts and failure details replaced with a note, once eliding results was not enough. */
  elidedTexts?: number;
  bytesBefore: number;
  bytesAfter: number;
}

/** Marks a tool result whose data was elided to keep the transcript within its budget. */
export interface ElidedToolResult {
  elided: true;
  /** The size of the output's JSON that was elided. */
  bytes: number;
  /** Tells the model what happened. */
  note: string;
}

/** Options of {@link compactTranscript}. */
export interface CompactTranscriptOptions {
  /**
   * When eliding old tool outputs is not enough, elide older assistant texts and failure details too, and report
   * a compaction even when nothing could be elided, so the caller sees `bytesAfter` still over the budget.
   * @default false (how runs started before this option compacted, kept so that they replay as recorded)
   */
  elideTexts?: boolean;
}

/** Assistant texts and failure messages up to this length are kept whole: eliding them would save next to nothing. */
const maxKeptTextLength = 256;

/**
 * Keeps `transcript` within `maxBytes` by replacing the data of the oldest tool results with an
 * {@link ElidedToolResult}, oldest first, until it fits: the model keeps every message, every call and whether each
 * call succeeded, and loses only old outputs it has already read. With `elideTexts`, older assistant texts and
 * failure details go next. The newest assistant turn and its results are kept, so the model always sees what it
 * just asked for; when that alone is over the budget, `bytesAfter` says so. Changes the transcript in place;
 * returns what it did, or undefined when it already fitted. Pure and deterministic, so the workflow can call it.
 */
export function compactTranscript(
  transcript: TranscriptMessage[],
  maxBytes: number,
  options: CompactTranscriptOptions = {},
): TranscriptCompaction | undefined {
  const bytesBefore = transcriptBytes(transcript);
  if (bytesBefore <= maxBytes) return undefined;

  const newestAssistant = transcript.findLastIndex((message) => message.role === 'assistant');
  const results = elideOldest(transcript, newestAssistant, bytesBefore, maxBytes, elideToolOutput);
  if (!options.elideTexts) {
    return results.elided > 0 ? { elidedResults: results.elided, bytesBefore, bytesAfter: results.bytes } : undefined;
  }
  const texts = elideOldest(transcript, newestAssistant, results.bytes, maxBytes, elideTextAndDetails);
  return {
    elidedResults: results.elided,
    ...(texts.elided > 0 ? { elidedTexts: texts.elided } : {}),
    bytesBefore,
    bytesAfter: texts.bytes,
  };
}

/** The bytes the budget counts for a transcript: its JSON, a stored output or text at its stored size. */
export function transcriptBytes(transcript: readonly TranscriptMessage[]): number {
  // The transcript's JSON is its messages' JSON, a comma between each two, and the brackets.
  return transcript.reduce((sum, message) => sum + messageBytes(message), 0) + transcript.length + 1;
}

/** Replaces messages before `end`, oldest first, with what `elide` makes of them, until the transcript fits. */
function elideOldest(
  transcript: TranscriptMessage[],
  end: number,
  bytesNow: number,
  maxBytes: number,
  elide: (message: TranscriptMessage) => TranscriptMessage | undefined,
): { elided: number; bytes: number } {
  let bytes = bytesNow;
  let elided = 0;
  for (let index = 0; index < end && bytes > maxBytes; index++) {
    const message = transcript[index];
    const replacement = message && elide(message);
    if (!message || !replacement) continue;
    const saved = messageBytes(message) - messageBytes(replacement);
    if (saved <= 0) continue;
    transcript[index] = replacement;
    bytes -= saved;
    elided += 1;
  }
  return { elided, bytes };
}

function elideToolOutput(message: TranscriptMessage): TranscriptMessage | undefined {
  if (message.role !== 'tool' || isElided(message.result)) return undefined;
  return { ...message, result: elideResult(message.result) };
}

const elidedTextNote = '[Text removed to keep the conversation within its size budget.]';

function elideTextAndDetails(message: TranscriptMessage): TranscriptMessage | undefined {
  if (message.role === 'assistant' && message.storedContent) {
    const { storedContent, ...rest } = message;
    return { ...rest, content: `${storedContent.preview.slice(0, maxKeptTextLength)}… ${elidedTextNote}` };
  }
  if (message.role === 'assistant' && message.content.length > maxKeptTextLength) {
    return { ...message, content: `${message.content.slice(0, maxKeptTextLength)}… ${elidedTextNote}` };
  }
  if (message.role === 'tool' && !message.result.success) {
    const { result } = message;
    if (result.error.length <= maxKeptTextLength && result.issues === undefined && result.input === undefined) {
      return undefined;
    }
    const error =
      result.error.length > maxKeptTextLength
        ? `${result.error.slice(0, maxKeptTextLength)}… ${elidedTextNote}`
        : result.error;
    return {
      ...message,
      result: {
        success: false,
        toolName: result.toolName,
        ...(result.toolCallId !== undefined ? { toolCallId: result.toolCallId } : {}),
        error,
        errorType: result.errorType,
      },
    };
  }
  return undefined;
}

function elideResult(result: ToolResult): ToolResult {
  const ids = {
    toolName: result.toolName,
    ...(result.toolCallId !== undefined ? { toolCallId: result.toolCallId } : {}),
  };
  if (!result.success) return { success: false, ...ids, error: result.error, errorType: result.errorType };
  const note: ElidedToolResult = {
    elided: true,
    bytes: isStoredToolOutput(result.data) ? result.data.bytes : utf8ByteLength(toJsonText(result.data) ?? ''),
    note: 'Output removed to keep the conversation within its size budget; call the tool again if you need it.',
  };
  return { success: true, ...ids, data: note };
}

function isElided(result: ToolResult): boolean {
  const data = result.success ? result.data : undefined;
  return typeof data === 'object' && data !== null && (data as Partial<ElidedToolResult>).elided === true;
}

/**
 * Each message's JSON size, measured once: the run checks its budget before every model call, and a message never
 * changes once it is in the transcript (compaction puts a new one in its place), so only new messages cost a pass.
 * A tool output or model text kept by reference counts at its own size: the model gets it whole.
 */
const measuredBytes = new WeakMap<TranscriptMessage, number>();

function messageBytes(message: TranscriptMessage): number {
  let bytes = measuredBytes.get(message);
  if (bytes === undefined) {
    bytes = utf8ByteLength(toJsonText(message) ?? '') + storedOutputBytes(message);
    measuredBytes.set(message, bytes);
  }
  return bytes;
}

/** What a tool output or model text kept by reference adds to its message's size beyond the reference itself. */
function storedOutputBytes(message: TranscriptMessage): number {
  if (message.role === 'assistant' && isStoredModelText(message.storedContent)) {
    return message.storedContent.bytes - utf8ByteLength(toJsonText(message.storedContent) ?? '');
  }
  if (message.role !== 'tool' || !message.result.success || !isStoredToolOutput(message.result.data)) return 0;
  return message.result.data.bytes - utf8ByteLength(toJsonText(message.result.data) ?? '');
}
