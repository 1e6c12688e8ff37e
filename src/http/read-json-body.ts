import type { MiddlewareHandler } from 'hono';
import { HttpError } from './http-error.js';

/**
 * Reads a POST body as JSON, counting bytes as they arrive so an oversized body is refused without being
 * buffered whatever its `Content-Length` says, then hands the parsed value on as `application/json`.
 * An empty body reads as `{}`, so the schema (not the parser) says what is missing.
 */
export function readJsonBody(maxBytes: number): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method !== 'POST') return next();
    if (Number(c.req.header('content-length')) > maxBytes) throw payloadTooLarge(maxBytes);
    const text = await readText(c.req.raw.body, maxBytes);
    let value: unknown = {};
    if (text.trim() !== '') {
      try {
        value = JSON.parse(text);
      } catch (error) {
        throw new HttpError(400, 'invalid_json', `The body is not valid JSON: ${(error as Error).message}`);
      }
    }
    const headers = new Headers(c.req.raw.headers);
    headers.set('content-type', 'application/json');
    headers.delete('content-length');
    c.req.raw = new Request(c.req.raw.url, { method: 'POST', headers, body: JSON.stringify(value) });
    await next();
  };
}

async function readText(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<string> {
  if (!body) return '';
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw payloadTooLarge(maxBytes);
    }
    chunks.push(value);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new HttpError(400, 'invalid_json', 'The body is not valid UTF-8');
  }
}

function payloadTooLarge(maxBytes: number): HttpError {
  return new HttpError(413, 'payload_too_large', `The body exceeds ${maxBytes} bytes`);
}
