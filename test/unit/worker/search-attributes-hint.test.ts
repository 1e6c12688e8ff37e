import type { NativeConnection } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { checkSearchAttributes } from '../../../src/worker/relay-plugin.js';

/** A connection to a namespace that has none of Relay-E's search attributes. */
const bareNamespace = {
  operatorService: { listSearchAttributes: async () => ({ customAttributes: {} }) },
} as unknown as NativeConnection;

describe('the commands that register missing search attributes', () => {
  it('name the server the worker connected to, and its namespace', async () => {
    const failure = checkSearchAttributes(bareNamespace, 'shop', '127.0.0.1:17263');
    await expect(failure).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(failure).rejects.toThrow(
      'temporal operator search-attribute create --address 127.0.0.1:17263 --namespace shop --name RelayTenant --type Keyword',
    );
  });

  it('say to add the server address when the worker was handed a connection whose address it cannot tell', async () => {
    const failure = checkSearchAttributes(bareNamespace, 'shop');
    await expect(failure).rejects.toThrow(
      'temporal operator search-attribute create --namespace shop --name RelayTenant --type Keyword',
    );
    await expect(failure).rejects.toThrow(/--address HOST:PORT/);
  });
});
