import { describe, expect, it } from 'vitest';
import { RelayError } from '../../../src/shared/errors.js';
import { createMemoryPayloadStore } from '../../../src/store/memory-payload-store.js';
import { describePayloadStoreBehaviour } from './payload-store-behaviour.js';

describePayloadStoreBehaviour('memory store', () => ({ open: (options) => createMemoryPayloadStore(options) }), {
  persistent: false,
});

describe('memory store', () => {
  const scope = { tenantId: 'acme', runId: 'run-1' };
  const bytes = (fill: number, length = 40) => new Uint8Array(length).fill(fill);

  it('evicts the least recently used payloads once it holds more than maxBytes', async () => {
    const store = createMemoryPayloadStore({ maxBytes: 100 });
    const first = await store.put(scope, bytes(1));
    const second = await store.put(scope, bytes(2));
    await store.get(scope, first);

    const third = await store.put(scope, bytes(3));

    await expect(store.get(scope, second)).rejects.toMatchObject({ code: 'payload_not_found' });
    expect(await store.get(scope, first)).toEqual(bytes(1));
    expect(await store.get(scope, third)).toEqual(bytes(3));
  });

  it('keeps its bytes when a caller changes the array it stored or the one it read', async () => {
    const store = createMemoryPayloadStore();
    const stored = bytes(7);
    const ref = await store.put(scope, stored);
    stored.fill(0);
    (await store.get(scope, ref)).fill(0);

    expect(await store.get(scope, ref)).toEqual(bytes(7));
  });

  it('refuses a payload larger than maxBytes with payload_too_large instead of evicting everything for it', async () => {
    const store = createMemoryPayloadStore({ maxBytes: 100 });
    const kept = await store.put(scope, bytes(1));

    const error: unknown = await store.put(scope, bytes(2, 101)).catch((caught: unknown) => caught);

    expect(RelayError.isInstance(error) && error.code).toBe('payload_too_large');
    expect(await store.get(scope, kept)).toEqual(bytes(1));
  });

  it('refuses a maxBytes or retentionMs that is not a size or a period with invalid_input', () => {
    for (const options of [{ maxBytes: 0 }, { maxBytes: 1.5 }, { retentionMs: -1 }, { retentionMs: Number.NaN }]) {
      expect(() => createMemoryPayloadStore(options), JSON.stringify(options)).toThrow(
        expect.objectContaining({ code: 'invalid_input' }),
      );
    }
  });
});
