import { createHash, randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EncryptionOptions } from '../../../src/security/encryption-keys.js';
import type { ErrorCode } from '../../../src/shared/errors.js';
import type { PayloadRef, PayloadScope, PayloadStore } from '../../../src/store/payload-store.js';

/** Options a behaviour test opens a store with. */
export interface TestStoreOptions {
  encryption?: EncryptionOptions;
  retentionMs?: number;
}

/** One test's storage: an empty folder, table or map, and the stores opened over it. */
export interface TestStorage {
  /** A new store over this storage; called again, another store over the same payloads when the store persists. */
  open(options?: TestStoreOptions): PayloadStore;
  /** Stores that keep payloads at rest: the stored bytes of a payload, and a way to overwrite them. */
  atRest?: {
    read(tenantId: string, ref: PayloadRef): Promise<Buffer>;
    write(tenantId: string, ref: PayloadRef, bytes: Buffer): Promise<void>;
  };
  /** Deletes the storage after the test. */
  remove?(): Promise<void>;
}

const day = 24 * 60 * 60 * 1000;
const keyA = randomBytes(32);
const keyB = randomBytes(32);
const encryption: EncryptionOptions = { keys: { 'k-1': keyA } };
const acme = (runId = 'run-1'): PayloadScope => ({ tenantId: 'acme', runId });
const globex = (runId = 'run-1'): PayloadScope => ({ tenantId: 'globex', runId });
const text = (value: string) => new TextEncoder().encode(value);
const plainSha256 = (data: Uint8Array) => `sha256:${createHash('sha256').update(data).digest('hex')}`;

/** Waits until the clock has moved to another millisecond, so two stores are not at the same time. */
async function nextMillisecond(): Promise<void> {
  const start = Date.now();
  while (Date.now() === start) await new Promise((resolve) => setTimeout(resolve, 1));
}

/** The error code a promise rejects with, or 'resolved'. */
async function failureCode(promise: Promise<unknown>): Promise<ErrorCode | 'resolved' | 'not a RelayError'> {
  return promise.then(
    () => 'resolved' as const,
    (error: unknown) => (error as { code?: ErrorCode }).code ?? 'not a RelayError',
  );
}

/**
 * The behaviour every payload store shares: addressing, tenant isolation, round trips, concurrency and retention,
 * and for stores with `atRest` access, encryption at rest, rotation and tamper detection across store instances.
 */
export function describePayloadStoreBehaviour(
  name: string,
  newStorage: () => Promise<TestStorage> | TestStorage,
  { persistent }: { persistent: boolean },
): void {
  describe(`${name}: shared payload-store behaviour`, () => {
    let storage: TestStorage;
    const opened: PayloadStore[] = [];
    const open = (options?: TestStoreOptions) => {
      const store = storage.open(options);
      opened.push(store);
      return store;
    };

    beforeEach(async () => {
      storage = await newStorage();
    });

    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
      await storage.remove?.();
    });

    describe('addressing and round trips', () => {
      it('gives the same bytes of one tenant one address, the SHA-256 of the bytes, whichever run stores them', async () => {
        const store = open();
        const data = text('the transcript so far');

        const first = await store.put(acme('run-1'), data);
        const second = await store.put(acme('run-2'), data);

        expect(first).toBe(second);
        expect(first).toBe(plainSha256(data));
        expect(await store.get(acme('run-3'), first)).toEqual(data);
      });

      it('reads back binary bytes and a 3 MiB payload exactly', async () => {
        const store = open({ encryption });
        const binary = Uint8Array.from({ length: 512 }, (_, index) => index % 256);
        const large = randomBytes(3 * 1024 * 1024);

        const [binaryRef, largeRef] = await Promise.all([store.put(acme(), binary), store.put(acme(), large)]);

        expect(Buffer.from(await store.get(acme(), binaryRef)).equals(Buffer.from(binary))).toBe(true);
        expect(Buffer.from(await store.get(acme(), largeRef)).equals(large)).toBe(true);
      });

      it('throws payload_not_found for an address it never stored', async () => {
        const store = open();
        await store.put(acme(), text('something else'));

        expect(await failureCode(store.get(acme(), plainSha256(text('never stored')) as PayloadRef))).toBe(
          'payload_not_found',
        );
      });

      it('refuses a string that is not an address with invalid_input before it names a file or a row', async () => {
        const store = open();

        expect(await failureCode(store.get(acme(), 'sha256:../../../etc/passwd'))).toBe('invalid_input');
        expect(await failureCode(store.get(acme(), 'md5:abc' as PayloadRef))).toBe('invalid_input');
      });

      it('stores one payload when many runs put the same bytes at once', async () => {
        const store = open({ retentionMs: 0 });
        const data = randomBytes(256 * 1024);
        const runs = Array.from({ length: 12 }, (_, index) => acme(`run-${index}`));

        const refs = await Promise.all(runs.map((scope) => store.put(scope, data)));

        expect(new Set(refs).size).toBe(1);
        expect(Buffer.from(await store.get(acme(), refs[0] as PayloadRef)).equals(data)).toBe(true);
        const closedAt = new Date();
        await Promise.all(runs.map((scope) => store.markRunClosed(scope, closedAt)));
        expect(await store.sweep({ now: new Date(closedAt.getTime() + 1) })).toBe(1);
      });
    });

    describe('tenant isolation', () => {
      it("throws payload_not_found when another tenant asks for a tenant's address", async () => {
        const store = open();
        const ref = await store.put(acme(), text('acme only'));

        expect(await failureCode(store.get(globex(), ref))).toBe('payload_not_found');
        expect(await store.get(acme(), ref)).toEqual(text('acme only'));
      });

      it('with encryption, gives equal bytes of two tenants different addresses that are not their plain SHA-256', async () => {
        const store = open({ encryption });
        const data = text('the same words in two tenants');

        const acmeRef = await store.put(acme(), data);
        const globexRef = await store.put(globex(), data);

        expect(acmeRef).toMatch(/^sha256:[0-9a-f]{64}$/);
        expect(acmeRef).not.toBe(globexRef);
        expect(acmeRef).not.toBe(plainSha256(data));
        expect(await store.put(acme('run-2'), data)).toBe(acmeRef);
        expect(await failureCode(store.get(globex(), acmeRef))).toBe('payload_not_found');
      });
    });

    describe('retention', () => {
      it('deletes a payload once every run that stored it closed longer than retentionMs ago', async () => {
        const store = open();
        const ref = await store.put(acme(), text('closed run'));
        const closedAt = new Date();
        await store.markRunClosed(acme(), closedAt);

        expect(await store.sweep({ now: new Date(closedAt.getTime() + day - 1), retentionMs: day })).toBe(0);
        expect(await store.get(acme(), ref)).toEqual(text('closed run'));
        expect(await store.sweep({ now: new Date(closedAt.getTime() + day + 1), retentionMs: day })).toBe(1);
        expect(await failureCode(store.get(acme(), ref))).toBe('payload_not_found');
      });

      it("sweeps with the store's retentionMs when the sweep names none", async () => {
        const store = open({ retentionMs: 1_000 });
        const ref = await store.put(acme(), text('short-lived'));
        const closedAt = new Date();
        await store.markRunClosed(acme(), closedAt);

        expect(await store.sweep({ now: new Date(closedAt.getTime() + 999) })).toBe(0);
        expect(await store.sweep({ now: new Date(closedAt.getTime() + 1_001) })).toBe(1);
        expect(await failureCode(store.get(acme(), ref))).toBe('payload_not_found');
      });

      it('never deletes a payload of a run that has not closed, however old', async () => {
        const store = open();
        const ref = await store.put(acme(), text('open run'));

        expect(await store.sweep({ now: new Date(Date.now() + 365 * day), retentionMs: day })).toBe(0);
        expect(await store.get(acme(), ref)).toEqual(text('open run'));
      });

      it('keeps a payload an open run shares with a closed one, and deletes it when the last run has closed', async () => {
        const store = open();
        const data = text('shared by two runs');
        const ref = await store.put(acme('run-1'), data);
        await store.put(acme('run-2'), data);
        await store.markRunClosed(acme('run-1'), new Date());

        expect(await store.sweep({ now: new Date(Date.now() + 30 * day), retentionMs: day })).toBe(0);
        expect(await store.get(acme('run-2'), ref)).toEqual(data);

        const lastClosedAt = new Date(Date.now() + 30 * day);
        await store.markRunClosed(acme('run-2'), lastClosedAt);
        expect(await store.sweep({ now: new Date(lastClosedAt.getTime() + day - 1), retentionMs: day })).toBe(0);
        expect(await store.sweep({ now: new Date(lastClosedAt.getTime() + day + 1), retentionMs: day })).toBe(1);
      });

      it('keeps a payload stored within the retention period, even when every run that stored it closed long ago', async () => {
        const store = open();
        const ref = await store.put(acme(), text('stored just now'));
        await store.markRunClosed(acme(), new Date(Date.now() - 2 * day));

        expect(await store.sweep({ retentionMs: day })).toBe(0);
        expect(await store.get(acme(), ref)).toEqual(text('stored just now'));
        expect(await store.sweep({ now: new Date(Date.now() + 2 * day), retentionMs: day })).toBe(1);
      });

      it("closes only the tenant's own run: another tenant's run of the same id keeps its payload", async () => {
        const store = open();
        await store.put(acme('run-1'), text('acme'));
        const globexRef = await store.put(globex('run-1'), text('globex'));
        await store.markRunClosed(acme('run-1'), new Date());

        expect(await store.sweep({ now: new Date(Date.now() + 2 * day), retentionMs: day })).toBe(1);
        expect(await store.get(globex('run-1'), globexRef)).toEqual(text('globex'));
      });
    });

    describe('unclosed runs', () => {
      it('lists the runs that stored payloads and were not marked closed, oldest first, with when each first stored', async () => {
        const store = open();
        const before = new Date();
        await store.put(acme('run-1'), text('first'));
        await nextMillisecond();
        await store.put(globex('run-2'), text('second'));
        await nextMillisecond();
        await store.put(acme('run-3'), text('third'));
        await store.put(acme('run-1'), text('first run again, not first any more'));
        await store.markRunClosed(acme('run-3'));
        const after = new Date();

        const runs = await store.listUnclosedRuns({ limit: 10 });

        expect(runs.map(({ tenantId, runId }) => ({ tenantId, runId }))).toEqual([acme('run-1'), globex('run-2')]);
        for (const run of runs) {
          expect(run.firstStoredAt.getTime()).toBeGreaterThanOrEqual(before.getTime());
          expect(run.firstStoredAt.getTime()).toBeLessThanOrEqual(after.getTime());
        }
        expect(runs[0]?.firstStoredAt.getTime()).toBeLessThan(runs[1]?.firstStoredAt.getTime() ?? 0);
      });

      it('pages with limit and after, listing every run once even when the run it pages after has closed since', async () => {
        const store = open();
        const scopes = Array.from({ length: 5 }, (_, index) => acme(`run-${index}`));
        for (const scope of scopes) await store.put(scope, text(scope.runId));

        const first = await store.listUnclosedRuns({ limit: 2 });
        await store.markRunClosed(first[1] ?? acme('missing'));
        const second = await store.listUnclosedRuns({ limit: 2, after: first[1] });
        const third = await store.listUnclosedRuns({ limit: 2, after: second[1] });

        expect([first, second, third].map((page) => page.map((run) => run.runId))).toEqual([
          ['run-0', 'run-1'],
          ['run-2', 'run-3'],
          ['run-4'],
        ]);
        expect((await store.listUnclosedRuns({ limit: 10 })).map((run) => run.runId)).toEqual([
          'run-0',
          'run-2',
          'run-3',
          'run-4',
        ]);
      });

      it('lists no run whose every close the sweep has forgotten', async () => {
        const store = open({ retentionMs: 0 });
        await store.put(acme('swept'), text('swept'));
        await store.markRunClosed(acme('swept'));
        await store.sweep({ now: new Date(Date.now() + day) });

        expect(await store.listUnclosedRuns({ limit: 10 })).toEqual([]);
      });

      it('lists a run marked closed again once it stores again, and keeps what it stores while it is open', async () => {
        // A Temporal reset reopens a closed run under the same id: its payloads must not expire from the old close.
        const store = open({ retentionMs: 7 * day });
        const now = Date.now();
        await store.put(acme('reset'), text('before the reset'));
        const [firstListed] = await store.listUnclosedRuns({ limit: 10 });
        await store.markRunClosed(acme('reset'), new Date(now - 6 * day));
        await nextMillisecond();
        const ref = await store.put(acme('reset'), text('after the reset'));

        expect(await store.listUnclosedRuns({ limit: 10 })).toEqual([firstListed]);
        expect(await store.sweep({ now: new Date(now + 8 * day) })).toBe(0);
        expect(await store.get(acme('reset'), ref)).toEqual(text('after the reset'));
      });

      it('lets a run that stored after its close expire from that close once it is marked closed again', async () => {
        // An activity can finish after its run closed: the janitor lists the run again, Temporal says it closed, and
        // the janitor marks it closed at the same time, so the late payload does not outlive the run for good.
        const store = open({ retentionMs: day });
        const closedAt = new Date();
        await store.put(acme('late'), text('stored before its close'));
        await store.markRunClosed(acme('late'), closedAt);
        const ref = await store.put(acme('late'), text('stored after its close'));
        expect((await store.listUnclosedRuns({ limit: 10 })).map((run) => run.runId)).toEqual(['late']);

        await store.markRunClosed(acme('late'), closedAt);

        expect(await store.listUnclosedRuns({ limit: 10 })).toEqual([]);
        expect(await store.sweep({ now: new Date(Date.now() + day + 1) })).toBe(2);
        expect(await failureCode(store.get(acme('late'), ref))).toBe('payload_not_found');
      });

      it('refuses a limit that is not a positive integer with invalid_input', async () => {
        const store = open();

        for (const limit of [0, -1, 1.5, Number.NaN]) {
          expect(await failureCode(store.listUnclosedRuns({ limit })), String(limit)).toBe('invalid_input');
        }
      });
    });

    if (persistent) describeAtRest(() => storage, open);
  });
}

/** Encryption at rest, key rotation and tamper detection: a second store over the same storage reads the first's. */
function describeAtRest(storage: () => TestStorage, open: (options?: TestStoreOptions) => PayloadStore): void {
  const atRest = () => {
    const access = storage().atRest;
    if (!access) throw new Error('A persistent store under test must give the suite access to its stored bytes');
    return access;
  };

  describe('at rest', () => {
    it('is read by another store over the same storage, as a worker that replaced a crashed one would', async () => {
      const ref = await open({ encryption }).put(acme(), text('survives the writer'));

      expect(await open({ encryption }).get(acme(), ref)).toEqual(text('survives the writer'));
    });

    it('keeps no plaintext at rest when it encrypts', async () => {
      const secret = 'PLAINTEXT-MARKER-4e1d '.repeat(20);
      const ref = await open({ encryption }).put(acme(), text(secret));

      const stored = await atRest().read('acme', ref);
      expect(stored.includes(Buffer.from('PLAINTEXT-MARKER-4e1d'))).toBe(false);
      expect(stored.length).toBeGreaterThan(secret.length);
    });

    it('keeps the plaintext when no keys are given, which is what the tamper test below relies on', async () => {
      const ref = await open().put(acme(), text('in the clear'));

      expect((await atRest().read('acme', ref)).includes(Buffer.from('in the clear'))).toBe(true);
    });

    it('reads payloads stored under the old key after rotation, and stores new ones under the new key', async () => {
      const data = text('written before the rotation');
      const oldRef = await open({ encryption }).put(acme(), data);
      const rotated = open({ encryption: { keys: { 'k-1': keyA, 'k-2': keyB }, currentKeyId: 'k-2' } });

      expect(await rotated.get(acme(), oldRef)).toEqual(data);
      const newRef = await rotated.put(acme(), data);
      expect(newRef).not.toBe(oldRef);
      expect(await failureCode(open({ encryption: { keys: { 'k-2': keyB } } }).get(acme(), newRef))).toBe('resolved');
    });

    it('throws decryption_failed without the key a payload names, with another key under its id, or with no keys', async () => {
      const ref = await open({ encryption }).put(acme(), text('locked'));

      expect(await failureCode(open({ encryption: { keys: { 'k-2': keyB } } }).get(acme(), ref))).toBe(
        'decryption_failed',
      );
      expect(await failureCode(open({ encryption: { keys: { 'k-1': keyB } } }).get(acme(), ref))).toBe(
        'decryption_failed',
      );
      expect(await failureCode(open().get(acme(), ref))).toBe('decryption_failed');
    });

    it('reports a payload altered at rest instead of returning it: payload_corrupt in the clear, decryption_failed encrypted', async () => {
      const plainStore = open();
      const plainRef = await plainStore.put(acme(), text('original words'));
      const encryptedStore = open({ encryption });
      const encryptedRef = await encryptedStore.put(acme(), text('original words, sealed'));

      for (const ref of [plainRef, encryptedRef]) {
        const stored = await atRest().read('acme', ref);
        stored.writeUInt8(stored.readUInt8(stored.length - 1) ^ 0x01, stored.length - 1);
        await atRest().write('acme', ref, stored);
      }

      expect(await failureCode(plainStore.get(acme(), plainRef))).toBe('payload_corrupt');
      expect(await failureCode(encryptedStore.get(acme(), encryptedRef))).toBe('decryption_failed');
    });

    it('removes a payload it found damaged, so storing the same bytes again stores them afresh', async () => {
      const store = open();
      const ref = await store.put(acme(), text('original words'));
      const stored = await atRest().read('acme', ref);
      stored.writeUInt8(stored.readUInt8(stored.length - 1) ^ 0x01, stored.length - 1);
      await atRest().write('acme', ref, stored);

      await expect(store.get(acme(), ref)).rejects.toMatchObject({
        code: 'payload_corrupt',
        message: expect.stringContaining('it is removed') as unknown,
      });
      // Before, the put found the damaged record, kept it, and every later read failed again.
      expect(await store.put(acme(), text('original words'))).toBe(ref);
      expect(new TextDecoder().decode(await store.get(acme(), ref))).toBe('original words');
    });

    it("reports another tenant's encrypted payload copied under a tenant's own address", async () => {
      const store = open({ encryption });
      const acmeRef = await store.put(acme(), text('acme secret'));
      const globexRef = await store.put(globex(), text('globex secret'));
      await atRest().write('acme', acmeRef, await atRest().read('globex', globexRef));

      expect(await failureCode(store.get(acme(), acmeRef))).toBe('decryption_failed');
    });
  });
}
