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

    await expect(store.get(scope, second)).rejects.toMatchObject({
      code: 'payload_not_found',
      message: expect.stringContaining('this store evicted it to stay within 100 bytes') as unknown,
    });
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

  it('remembers at most 100,000 unclosed runs, so a worker no janitor serves does not grow without end', async () => {
    const store = createMemoryPayloadStore();
    for (let run = 0; run <= 100_000; run++) await store.put({ tenantId: 'acme', runId: `run-${run}` }, bytes(1));

    const unclosed = await store.listUnclosedRuns({ limit: 200_000 });

    expect(unclosed).toHaveLength(100_000);
    // The oldest is forgotten: it counts as open, so its payloads leave only by the byte bound.
    expect(unclosed.some((run) => run.runId === 'run-0')).toBe(false);
    expect(unclosed.some((run) => run.runId === 'run-100000')).toBe(true);
  });

  it('leaves a payload more than 1,000 runs put to the byte bound, since it stops recording their ids', async () => {
    const store = createMemoryPayloadStore();
    const runs = Array.from({ length: 1_001 }, (_, run) => ({ tenantId: 'acme', runId: `run-${run}` }));
    const putByEvery = await Promise.all(runs.map((run) => store.put(run, bytes(1))));
    const fewRuns = runs.slice(0, 2);
    const putByTwo = await Promise.all(fewRuns.map((run) => store.put(run, bytes(2))));
    const longAgo = new Date(0);
    await Promise.all(runs.map((run) => store.markRunClosed(run, longAgo)));

    await store.sweep({ now: new Date(Date.now() + 60_000), retentionMs: 1 });

    // The payload of two closed runs expires; the one every run put stays until the byte bound evicts it.
    await expect(store.get(runs[0]!, putByTwo[0]!)).rejects.toMatchObject({ code: 'payload_not_found' });
    expect(await store.get(runs[0]!, putByEvery[0]!)).toEqual(bytes(1));
  });

  it('refuses a maxBytes or retentionMs that is not a size or a period with invalid_input', () => {
    for (const options of [{ maxBytes: 0 }, { maxBytes: 1.5 }, { retentionMs: -1 }, { retentionMs: Number.NaN }]) {
      expect(() => createMemoryPayloadStore(options), JSON.stringify(options)).toThrow(
        expect.objectContaining({ code: 'invalid_input' }),
      );
    }
  });
});
