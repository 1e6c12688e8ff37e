import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { RelayClient } from '../client/relay-client.js';
import { RelayError } from '../shared/errors.js';
import type { PayloadRef, PayloadStore } from '../store/payload-store.js';
import { isPayloadStoreUnreachable } from '../store/store-unreachable.js';
import { storedPayloadParamsSchema } from './api-schemas.js';
import { createResourceApi } from './create-resource-api.js';
import type { ApiEnv } from './create-resource-api.js';
import { HttpError, payloadStoreUnreachable } from './http-error.js';
import { apiKeySecurity, problemResponses } from './problem-responses.js';

/**
 * `GET /v1/runs/{id}/stored/{ref}`: a tool output or model text the workers kept in their payload store instead of
 * in history (the `storedOutput` or `storedText` ref an event shows), read from the same store. The run must be the
 * caller's tenant's (another's answers `run_not_found`, as a missing one does, as on every run route); the store keeps
 * each tenant's payloads apart, so a ref is read from the caller's tenant's only.
 */
export function createStoredPayloadsApi({
  client,
  payloadStore,
}: {
  client: RelayClient;
  payloadStore?: PayloadStore;
}): OpenAPIHono<ApiEnv> {
  const app = createResourceApi();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/runs/{id}/stored/{ref}',
      operationId: 'readStoredPayload',
      summary: "Read a tool output (its JSON) or a model text the run's events show by reference",
      security: apiKeySecurity,
      request: { params: storedPayloadParamsSchema },
      responses: {
        200: {
          description: 'The stored bytes: the output as JSON, or the text',
          content: { 'text/plain': { schema: z.string() } },
        },
        ...problemResponses(
          'unauthorized',
          'run_not_found',
          'payload_not_found',
          'invalid_input',
          'payload_store_unavailable',
          'payload_store_unreachable',
        ),
      },
    }),
    async (c) => {
      const { id: runId, ref } = c.req.valid('param');
      if (!payloadStore) {
        throw new HttpError(
          501,
          'payload_store_unavailable',
          "This API has no payload store: give it the workers' (createApi's payloadStore, or the config's)",
        );
      }
      const { tenantId } = c.get('caller');
      await client.assertRunExists(runId, { tenantId });
      const data = await readStored(payloadStore, { tenantId, runId }, ref as PayloadRef);
      return c.text(new TextDecoder().decode(data), 200);
    },
  );

  return app;
}

/**
 * The bytes at `ref` in the tenant's part of `store`: a ref it does not hold answers 404 `payload_not_found`, a store
 * that cannot be reached right now 503 `payload_store_unreachable`; any other failure is the error handler's.
 */
async function readStored(
  store: PayloadStore,
  scope: { tenantId: string; runId: string },
  ref: PayloadRef,
): Promise<Uint8Array> {
  try {
    return await store.get(scope, ref);
  } catch (error) {
    if (RelayError.hasCode(error, 'payload_not_found')) {
      throw new HttpError(404, 'payload_not_found', `Run '${scope.runId}' has no stored payload '${ref}'`, {
        cause: error,
      });
    }
    if (isPayloadStoreUnreachable(error)) throw payloadStoreUnreachable(error);
    throw error;
  }
}
