import { createApiKeyMac } from './api-keys.js';
import type { ApiKeyTenants } from './api-keys.js';
import { HttpError } from './http-error.js';

/** Seals a listing's cursor to the caller and filters it was issued for, and opens only what it sealed. */
export interface CursorSeal {
  seal(cursor: string, scope: string): string;
  /** The cursor inside `sealed`; a 422 naming `cursor` when it was not sealed here for this scope. */
  open(sealed: string, scope: string): string;
}

/**
 * A seal keyed by the API keys, so every API process that serves the same keys accepts the same cursors, and a
 * cursor forged, edited, or sent by another tenant or with other filters is refused before it reaches Temporal
 * (whose answer to a page token it did not issue is an error it retries for seconds).
 */
export function createCursorSeal(apiKeys: ApiKeyTenants): CursorSeal {
  const mac = createApiKeyMac(apiKeys, 'list cursor');
  return {
    seal: (cursor, scope) => `${cursor}.${mac.sign(`${scope}\n${cursor}`)}`,
    open(sealed, scope) {
      const separator = sealed.lastIndexOf('.');
      const cursor = sealed.slice(0, separator);
      if (separator < 0 || !mac.verify(`${scope}\n${cursor}`, sealed.slice(separator + 1))) {
        const message = 'Expected the nextCursor of a previous page, sent with the same filters';
        throw new HttpError(422, 'invalid_input', `Invalid query: cursor: ${message}`, {
          issues: [{ path: 'cursor', message, code: 'invalid_cursor' }],
        });
      }
      return cursor;
    },
  };
}
