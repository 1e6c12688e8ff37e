import { RelayError } from '../shared/errors.js';

/** A tool's output as it goes into history: the JSON value itself, or its JSON text cut to fit. */
export type TruncatedOutput =
  | { data: unknown; truncated?: undefined; originalSize?: undefined }
  | { data: string; truncated: true; originalSize: number };

const encoder = new TextEncoder();

/**
 * Serialises a tool's output to JSON and, when that is over `maxBytes` of UTF-8, returns the text cut at a
 * character boundary to fit, with the full size. Functions, symbols, BigInt and cycles throw
 * `RelayError('tool_execution_failed')` rather than vanish, because silently dropped data misleads the model.
 */
export function truncateOutput(output: unknown, maxBytes: number): TruncatedOutput {
  const json = toJson(output);
  if (json === undefined) return { data: undefined };
  const originalSize = Buffer.byteLength(json, 'utf8');
  if (originalSize <= maxBytes) return { data: JSON.parse(json) as unknown };
  // encodeInto writes whole code points only, so `read` never ends inside a character or a surrogate pair.
  const { read } = encoder.encodeInto(json, new Uint8Array(maxBytes));
  return { data: json.slice(0, read), truncated: true, originalSize };
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
    const reason = error instanceof Error ? error.message : String(error);
    throw new RelayError('tool_execution_failed', `Output is not JSON-serialisable: ${reason}`, { cause: error });
  }
}
