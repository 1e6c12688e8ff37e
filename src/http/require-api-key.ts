import type { MiddlewareHandler } from 'hono';
import { createApiKeyVerifier } from './api-keys.js';
import type { ApiKeyTenants } from './api-keys.js';
import type { ApiEnv } from './create-resource-api.js';
import { HttpError } from './http-error.js';

/** Lets through only callers with a valid API key (`Authorization: Bearer` or `x-api-key`) and records who they are. */
export function requireApiKey(apiKeys: ApiKeyTenants): MiddlewareHandler<ApiEnv> {
  const verifyApiKey = createApiKeyVerifier(apiKeys);
  return async (c, next) => {
    const presented = readApiKey(c.req.header('authorization'), c.req.header('x-api-key'));
    // No key is refused before the lookup, whatever the map holds.
    const caller = presented ? verifyApiKey(presented) : undefined;
    if (!caller) {
      throw new HttpError(401, 'unauthorized', 'Send a valid API key as `Authorization: Bearer <key>` or `x-api-key`', {
        headers: { 'www-authenticate': 'Bearer' },
      });
    }
    c.set('caller', caller);
    await next();
  };
}

function readApiKey(authorization: string | undefined, apiKeyHeader: string | undefined): string | undefined {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  return bearer ?? apiKeyHeader?.trim();
}
