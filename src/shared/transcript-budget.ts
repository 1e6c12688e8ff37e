import { toJsonText, utf8ByteLength } from './payload-limits.js';
import type { ToolResult } from './tool-result.js';
import type { TranscriptMessage } from './transcript.js';

/**
 * The most bytes (as JSON) of transcript a run keeps and sends to its model. Every model call carries the whole
 * transcript, and Temporal refuses a payload over 2 MiB, so a run that outgrew that could not call its model
 * again; half of it leaves room for the tool schemas and the rest of the request.
 */
export const defaultMaxTranscriptBytes = 1_048_576;

/** What a compaction did, for the `transcript_compacted` event. */
export interface TranscriptCompaction {
  /** Tool results replaced with a note, oldest first. */
  elidedResults: number;
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

/**
 * Keeps `transcript` within `maxBytes` by replacing the data of the oldest tool results with an
 * {@link ElidedToolResult}, oldest first, until it fits: the model keeps every message, every call and whether each
 * call succeeded, and loses only old outputs it has already read. Results of the newest assistant turn are kept, so
 * the model always sees what it just asked for. Changes the transcript in place; returns what it did, or
 * undefined when it already fitted. Pure and deterministic, so the workflow can call it.
 */
export function compactTranscript(transcript: TranscriptMessage[], maxBytes: number): TranscriptCompaction | undefined {
  // The transcript's JSON is its messages' JSON, a comma between each two, and the brackets.
  const bytesBefore = transcript.reduce((sum, message) => sum + messageBytes(message), 0) + transcript.length + 1;
  if (bytesBefore <= maxBytes) return undefined;

  const newestAssistant = transcript.findLastIndex((message) => message.role === 'assistant');
  let bytes = bytesBefore;
  let elidedResults = 0;
  for (let index = 0; index < newestAssistant && bytes > maxBytes; index++) {
    const message = transcript[index];
    if (message?.role !== 'tool' || isElided(message.result)) continue;
    const replacement = { ...message, result: elideResult(message.result) };
    const saved = messageBytes(message) - messageBytes(replacement);
    if (saved <= 0) continue;
    transcript[index] = replacement;
    bytes -= saved;
    elidedResults += 1;
  }
  return elidedResults > 0 ? { elidedResults, bytesBefore, bytesAfter: bytes } : undefined;
}

function elideResult(result: ToolResult): ToolResult {
  const ids = {
    toolName: result.toolName,
    ...(result.toolCallId !== undefined ? { toolCallId: result.toolCallId } : {}),
  };
  if (!result.success) return { success: false, ...ids, error: result.error, errorType: result.errorType };
  const note: ElidedToolResult = {
    elided: true,
    bytes: utf8ByteLength(toJsonText(result.data) ?? ''),
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
 */
const measuredBytes = new WeakMap<TranscriptMessage, number>();

function messageBytes(message: TranscriptMessage): number {
  let bytes = measuredBytes.get(message);
  if (bytes === undefined) {
    bytes = utf8ByteLength(toJsonText(message) ?? '');
    measuredBytes.set(message, bytes);
  }
  return bytes;
}
