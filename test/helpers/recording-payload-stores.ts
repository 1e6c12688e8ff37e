import type * as CreatePayloadStoreModule from '../../src/store/create-payload-store.js';

/**
 * The payload-store module with a `createPayloadStore` that records each store it makes and whether it was closed,
 * for a `vi.mock` of tests that check what a command leaves open.
 */
export function recordingPayloadStores(
  actual: typeof CreatePayloadStoreModule,
  stores: Array<{ closed: boolean }>,
): typeof CreatePayloadStoreModule {
  return {
    ...actual,
    createPayloadStore: (config) => {
      const store = actual.createPayloadStore(config);
      const record = { closed: false };
      stores.push(record);
      return {
        ...store,
        close: async () => {
          record.closed = true;
          await store.close();
        },
      };
    },
  };
}
