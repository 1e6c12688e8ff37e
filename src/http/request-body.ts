import type { Context, MiddlewareHandler } from 'hono';
import { nestedDeeperThan } from '../shared/nesting-depth.js';
import { HttpError } from './http-error.js';

/** The largest request body the API and the inbox take unless told otherwise: 1 MiB. */
export const defaultMaxBodyBytes = 1_048_576;

/**
 * How deeply a JSON body may nest objects and arrays: room for a tool call's input nested as deeply as a run checks
 * (128 levels) inside a run's messages, while a body nested past what the stack reaches is refused, not a 500.
 */
export const maxBodyDepth = 256;

/**
 * Reads a POST body as JSON, counting bytes as they arrive so an oversized body is refused without being
 * buffered whatever its `Content-Length` says, then hands the parsed value on as `application/json`.
 * An empty body reads as `{}`, so the schema (not the parser) says what is missing.
 */
export function readJsonBody(maxBytes: number): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method !== 'POST') return next();
    const text = utf8Text(await readLimitedBody(c, maxBytes));
    let value: unknown = {};
    if (text.trim() !== '') {
      try {
        value = JSON.parse(text);
      } catch (error) {
        throw invalidJson(error);
      }
    }
    refuseDeepBody(value);
    const headers = new Headers(c.req.raw.headers);
    headers.set('content-type', 'application/json');
    headers.delete('content-length');
    c.req.raw = new Request(c.req.raw.url, { method: 'POST', headers, body: JSON.stringify(value) });
    await next();
  };
}

/**
 * Refuses a POST body over `maxBytes` the same way, and hands the body on as it came for the route to parse (a form,
 * say): what the inbox's routes, signing in among them, read before anyone is known.
 */
export function limitBody(maxBytes: number): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method !== 'POST') return next();
    const body = await readLimitedBody(c, maxBytes);
    const headers = new Headers(c.req.raw.headers);
    headers.delete('content-length');
    c.req.raw = new Request(c.req.raw.url, { method: 'POST', headers, body });
    await next();
  };
}

/** The request's body, refused with 413 once it passes `maxBytes`, declared or counted. */
async function readLimitedBody(c: Context, maxBytes: number): Promise<Uint8Array> {
  if (Number(c.req.header('content-length')) > maxBytes) throw payloadTooLarge(maxBytes);
  const body: ReadableStream<Uint8Array> | null = c.req.raw.body;
  if (!body) return new Uint8Array();
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
  return Buffer.concat(chunks);
}

function utf8Text(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new HttpError(400, 'invalid_json', 'The body is not valid UTF-8');
  }
}

/** Refuses a parsed JSON body nested more than {@link maxBodyDepth} levels deep with 422 `invalid_input`. */
export function refuseDeepBody(value: unknown): void {
  if (!nestedDeeperThan(value, maxBodyDepth)) return;
  throw new HttpError(422, 'invalid_input', `The body nests objects and arrays more than ${maxBodyDepth} levels deep`);
}

/** The 400 a body that does not parse as JSON answers, with the parser's reason. */
export function invalidJson(error: unknown): HttpError {
  return new HttpError(400, 'invalid_json', `The body is not valid JSON: ${(error as Error).message}`);
}

function payloadTooLarge(maxBytes: number): HttpError {
  return new HttpError(413, 'payload_too_large', `The body exceeds ${maxBytes} bytes`);
}
