import { describe, expect, it, vi } from 'vitest';
import { useUnconnectedClient } from '../../helpers/unconnected-client.js';
import { createApi } from '../../../src/http/create-api.js';

/** Signing in reads a form and no run: a client that never connects is enough. */
const client = useUnconnectedClient();

describe('POST /inbox/session', () => {
  it('answers a form that does not parse with 400 invalid_input, and logs no server fault', async () => {
    const logger = { error: vi.fn() };
    const api = createApi({
      client: client(),
      apiKeys: new Map([['key-tenant-a-0123456789', { tenantId: 'a' }]]),
      logger,
    });
    for (const contentType of ['multipart/form-data', 'multipart/form-data; boundary=relay']) {
      const response = await api.request('/inbox/session', {
        method: 'POST',
        headers: { 'content-type': contentType },
        body: 'apiKey=key-tenant-a-0123456789',
      });
      expect(response.status, contentType).toBe(400);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      expect(await response.json()).toMatchObject({ status: 400, code: 'invalid_input' });
    }
    expect(logger.error).not.toHaveBeenCalled();
  });
});
