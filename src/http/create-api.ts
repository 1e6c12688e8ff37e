import { OpenAPIHono } from '@hono/zod-openapi';
import type { RelayClient } from '../client/relay-client.js';
import { RelayError } from '../shared/errors.js';
import type { PayloadStore } from '../store/payload-store.js';
import { checkApiKeys } from './api-keys.js';
import type { ApiKeyTenants } from './api-keys.js';
import { createApprovalsApi } from './approvals-api.js';
import type { ApiEnv } from './create-resource-api.js';
import { createErrorHandler, createNotFoundHandler } from './error-handlers.js';
import type { ApiLogger } from './error-handlers.js';
import { createHealthApi } from './health-api.js';
import { createInbox } from './inbox/create-inbox.js';
import { createOpenApiApi } from './openapi-api.js';
import { defaultMaxBodyBytes, readJsonBody } from './request-body.js';
import { requireApiKey } from './require-api-key.js';
import { RunEventHub } from './run-event-hub.js';
import { createRunEventsApi } from './run-events-api.js';
import { createRunsApi } from './runs-api.js';
import { createStoredPayloadsApi } from './stored-payloads-api.js';
import { TemporalReadiness } from './temporal-readiness.js';
import { createToolsApi } from './tools-api.js';

export type { ApiEnv } from './create-resource-api.js';

export interface CreateApiOptions {
  client: RelayClient;
  /**
   * The keys callers authenticate with, each mapped to the tenant it speaks for; at least one, each checked as
   * `loadApiKeys` checks them (16 to 512 characters without whitespace, a valid tenant id).
   */
  apiKeys: ApiKeyTenants;
  /** The largest request body accepted, by the API and the inbox alike. @default 1_048_576 (1 MiB) */
  maxBodyBytes?: number;
  /** How often a followed run is asked for new events (once for all its event streams and inbox pages). @default 250 */
  ssePollIntervalMs?: number;
  /** How often an idle event stream (the inbox's run timelines too) sends a comment line to keep proxies from closing it. @default 15_000 */
  sseHeartbeatIntervalMs?: number;
  /**
   * Where unexpected errors are logged (callers only ever see a bare 500), and, as one warning line each, requests that
   * found Temporal unusable or the payload store unreachable (to `warn`, else to `error`).
   * @default console
   */
  logger?: ApiLogger;
  /**
   * The workers' payload store, for `GET /v1/runs/{id}/stored/{ref}` (tool outputs and model texts kept out of
   * history); without it that route answers 501 `payload_store_unavailable`. The caller closes it.
   * @default undefined
   */
  payloadStore?: PayloadStore;
  /** The URL callers reach this API at, as the OpenAPI document's `servers` names it. @default '/' (where the document is served) */
  publicUrl?: string;
  /**
   * The address people open the inbox at (`RELAY_E_INBOX_URL` for `relay-e serve`), behind a proxy that ends TLS:
   * the inbox takes changes from its origin only (see `CreateInboxOptions.publicUrl`).
   * @default undefined (each request's own origin)
   */
  inboxUrl?: string;
}

/**
 * Builds the HTTP API over a `RelayClient`: every route but `/healthz`, `/readyz`, the OpenAPI document, its reference
 * page and the inbox (which signs people in with a key itself) needs an API key; run routes see only the key's tenant's runs,
 * and lists (the API's and the inbox's) only those on the client's task queue, where the API starts them.
 */
export function createApi(options: CreateApiOptions): OpenAPIHono<ApiEnv> {
  // An API without keys would refuse every caller: a deployment that lost its keys is told so, not left to answer 401.
  if (options.apiKeys.size === 0) {
    throw new RelayError('invalid_input', 'createApi needs at least one API key (apiKeys is empty)');
  }
  checkApiKeys(options.apiKeys, 'createApi');
  const logger = options.logger ?? console;
  const app = new OpenAPIHono<ApiEnv>();
  app.onError(createErrorHandler(logger));
  app.notFound(createNotFoundHandler(app));
  app.route('/', createHealthApi(new TemporalReadiness(options.client, { logger })));
  app.route('/', createOpenApiApi(app, options));
  // One poller a run for every follower in this process: the event streams' and the inbox's run pages'.
  const followers = new RunEventHub(options.client, options.ssePollIntervalMs ?? 250);
  // The web inbox signs people in with a key itself and keeps them in a session cookie.
  const maxBodyBytes = options.maxBodyBytes ?? defaultMaxBodyBytes;
  const { client, apiKeys, sseHeartbeatIntervalMs, inboxUrl } = options;
  const inboxOptions = { client, apiKeys, followers, logger, maxBodyBytes, sseHeartbeatIntervalMs };
  app.route('/', createInbox({ ...inboxOptions, ...(inboxUrl !== undefined ? { publicUrl: inboxUrl } : {}) }));
  app.use('/v1/*', requireApiKey(options.apiKeys));
  app.use('/v1/*', readJsonBody(maxBodyBytes));
  app.route('/', createRunsApi(options));
  app.route('/', createRunEventsApi({ ...options, followers }));
  app.route('/', createApprovalsApi(options));
  app.route('/', createToolsApi(options));
  app.route('/', createStoredPayloadsApi(options));
  return app;
}
