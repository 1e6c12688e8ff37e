import type { ToolInputIssue } from './tool-input.js';

/**
 * The largest model response (its JSON) a model activity returns. Temporal refuses a payload over 2 MiB (the
 * dev server's and the default cluster's blob size limit; it warns from 512 KiB) and a gRPC message over 4 MiB,
 * and the transcript sent to the next model call carries the response again, so one response keeps well below.
 */
export const defaultMaxModelResponseBytes = 1_048_576;

/**
 * The most `maxModelResponseBytes` may be set to: the largest `maxTranscriptBytes` a run may have, so a response
 * can always travel on to the next model call, and every event or query answer that carries its text stays under
 * Temporal's 2 MiB payload limit.
 */
export const maxAllowedModelResponseBytes = 1_572_864;

/** How much of an invalid tool call's input a validation failure echoes back into events and the transcript. */
export const maxEchoedInputBytes = 2_048;

/** How many issues a validation failure lists; the rest are counted in one closing issue. */
export const maxEchoedIssues = 20;

/** What stands in for an input too large to echo: its size and the start of its JSON. */
export interface TruncatedInput {
  truncated: true;
  bytes: number;
  preview: string;
}

/** The UTF-8 size of `text`, counted without Buffer or TextEncoder so workflow code can use it. */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      bytes += 4;
      index += 1;
    } else bytes += 3;
  }
  return bytes;
}

/** The value's JSON, or undefined when it has none (nested too deep for the stack, a cycle, a BigInt). */
export function toJsonText(value: unknown): string | undefined {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return undefined;
  }
}

/** The newest of `items` (oldest first, as given) whose JSON adds up to at most `maxBytes`. */
export function newestWithinBytes<T>(
  items: readonly T[],
  maxBytes: number,
  jsonOf: (item: T) => unknown = (item) => item,
): T[] {
  let bytes = 0;
  let first = items.length;
  while (first > 0) {
    bytes += utf8ByteLength(toJsonText(jsonOf(items[first - 1] as T)) ?? '');
    if (bytes > maxBytes) break;
    first -= 1;
  }
  return items.slice(first);
}

/** The input itself when its JSON fits in `maxBytes`, else a {@link TruncatedInput} with the first characters. */
export function boundEchoedInput(input: unknown, maxBytes = maxEchoedInputBytes): unknown {
  const json = toJsonText(input);
  if (json === undefined) return { truncated: true, bytes: -1, preview: '' } satisfies TruncatedInput;
  const bytes = utf8ByteLength(json);
  if (bytes <= maxBytes) return input;
  return { truncated: true, bytes, preview: json.slice(0, Math.floor(maxBytes / 4)) } satisfies TruncatedInput;
}

/** The first {@link maxEchoedIssues} issues, and one more that counts those left out. */
export function boundIssues(issues: readonly ToolInputIssue[]): ToolInputIssue[] {
  if (issues.length <= maxEchoedIssues) return [...issues];
  const left = issues.length - maxEchoedIssues;
  return [
    ...issues.slice(0, maxEchoedIssues),
    { path: '', message: `${left} more issue${left === 1 ? '' : 's'} not listed`, code: 'more_issues' },
  ];
}
