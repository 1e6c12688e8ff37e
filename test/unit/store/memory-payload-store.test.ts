import { describe, expect, it } from 'vitest';
import { RelayError } from '../../../src/shared/errors.js';
import { createMemoryPayloadStore } from '../../../src/store/memory-payload-store.js';

const scope = { tenantId: 'acme', runId: 'run-1' };
const bytes = (text: string) => new TextEncoder().encode(text);
const isNotFound = (error: unknown) => RelayError.isInstance(error) && error.code === 'payload_not_found';

describe('createMemoryPayloadStore', () => {
  it('addresses the same bytes of the same tenant by the same sha256 ref and gives them back', async () => {
    const store = createMemoryPayloadStore();
    const ref = await store.put(scope, bytes('hello'));
    expect(ref).toBe('sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824');
    expect(await store.put({ ...scope, runId: 'run-2' }, bytes('hello'))).toBe(ref);
    expect(new TextDecoder().decode(await store.get(scope, ref))).toBe('hello');
    await expect(store.get({ tenantId: 'globex', runId: 'run-1' }, ref)).rejects.toSatisfy(isNotFound);
  });

  it('drops the least recently used payloads past maxBytes, so a long-lived worker stays bounded', async () => {
    const store = createMemoryPayloadStore({ maxBytes: 10 });
    const first = await store.put(scope, bytes('aaaa'));
    const second = await store.put(scope, bytes('bbbb'));
    await store.get(scope, first);
    await store.put(scope, bytes('cccc'));
    await expect(store.get(scope, second)).rejects.toSatisfy(isNotFound);
    expect(new TextDecoder().decode(await store.get(scope, first))).toBe('aaaa');
  });
});
