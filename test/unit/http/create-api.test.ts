import { describe, expect, it } from 'vitest';
import { useUnconnectedClient } from '../../helpers/unconnected-client.js';
import { createApi } from '../../../src/http/create-api.js';
import { startApiServer } from '../../../src/http/start-api-server.js';

/** Building the API needs no Temporal: a client that never connects is enough. */
const client = useUnconnectedClient();

describe('createApi', () => {
  it('refuses an empty key map, which would leave an API that turns every caller away', () => {
    expect(() => createApi({ client: client(), apiKeys: new Map() })).toThrow(/at least one API key/);
    expect(() => createApi({ client: client(), apiKeys: new Map() })).toThrow(
      expect.objectContaining({ code: 'invalid_input' }),
    );
  });

  it('so startApiServer never listens without a key', async () => {
    await expect(startApiServer({ client: client(), apiKeys: new Map() })).rejects.toMatchObject({
      code: 'invalid_input',
    });
  });
});
