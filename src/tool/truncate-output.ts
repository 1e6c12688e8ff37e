import { errorMessage } from '../shared/error-message.js';
import { RelayError } from '../shared/errors.js';

/** A tool's output as it goes into history: the JSON value itself, or its JSON text cut to fit. */
export type TruncatedOutput =
  | { data: unknown; truncated?: undefined; originalSize?: undefined }
  | { data: string; truncated: true; originalSize: number };

/**
 * Serialises a tool's output to JSON and, when that is over `maxBytes` of UTF-8, returns the text cut at a
 * character boundary with the full size. The cut text is measured as history stores it, a JSON string whose quotes
 * and backslashes are escaped again, so an output full of them cannot take twice the bound. Functions, symbols,
 * BigInt and cycles throw `RelayError('tool_execution_failed')` rather than vanish, because silently dropped data
 * misleads the model. `redact` changes the JSON value before it is measured and cut: in the cut text a secret would
 * show escaped or cut in two, and no longer match its value.
 */
export function truncateOutput(
  output: unknown,
  maxBytes: number,
  redact?: (value: unknown) => unknown,
): TruncatedOutput {
  const serialised = toJson(output);
  if (serialised === undefined) return { data: undefined };
  const parsed: unknown = JSON.parse(serialised);
  const value = redact ? redact(parsed) : parsed;
  const json = redact ? JSON.stringify(value) : serialised;
  const originalSize = Buffer.byteLength(json, 'utf8');
  if (originalSize <= maxBytes) return { data: value };
  return { data: cutToFit(json, maxBytes), truncated: true, originalSize };
}

/** The note that ends a message `boundText` cut, and the pattern that finds it again. */
const cutNote = (bytes: number) => ` … [cut from ${bytes} bytes]`;
const cutNotePattern = / … \[cut from \d+ bytes\]$/;

/**
 * `message` within `maxBytes` as a JSON string, cut with a note of its full size: a tool's error message as history
 * stores it (a server may answer a failure with a whole HTML page, which would otherwise go into history and every
 * later model call), or a text in a log record.
 */
export function boundText(message: string, maxBytes: number): string {
  const size = Buffer.byteLength(JSON.stringify(message), 'utf8');
  if (size <= maxBytes) return message;
  const note = cutNote(Buffer.byteLength(message, 'utf8'));
  return `${cutToFit(message, Math.max(2, maxBytes - Buffer.byteLength(note, 'utf8')))}${note}`;
}

/** `message` with `change` applied to the part `boundText` kept of it; a message it did not cut, as it is. */
export function mapKeptText(message: string, change: (kept: string) => string): string {
  const note = cutNotePattern.exec(message);
  return note === null ? message : `${change(message.slice(0, note.index))}${note[0]}`;
}

/** The longest start of `text` whose JSON string (quotes and escapes included) fits in `maxBytes` of UTF-8. */
function cutToFit(text: string, maxBytes: number): string {
  let budget = maxBytes - 2; // the quotes around the string
  let end = 0;
  // Iterating by code point keeps a surrogate pair whole; each costs what JSON makes of it.
  for (const character of text) {
    const cost = Buffer.byteLength(JSON.stringify(character), 'utf8') - 2;
    if (cost > budget) break;
    budget -= cost;
    end += character.length;
  }
  return text.slice(0, end);
}

function toJson(output: unknown): string | undefined {
  try {
    return JSON.stringify(output, (key, value: unknown) => {
      if (typeof value === 'function' || typeof value === 'symbol') {
        throw new TypeError(`${key === '' ? 'the output' : `'${key}'`} is a ${typeof value}`);
      }
      return value;
    });
  } catch (error) {
    throw new RelayError('tool_execution_failed', `Output is not JSON-serialisable: ${whyNot(error)}`, {
      cause: error,
    });
  }
}

/** Why encoding failed, said plainly where the engine's words name its stack rather than the output. */
function whyNot(error: unknown): string {
  const message = errorMessage(error);
  if (!(error instanceof RangeError) || !/call stack/i.test(message)) return message;
  return `it nests objects and arrays more deeply than JSON encoding reaches (${message})`;
}
