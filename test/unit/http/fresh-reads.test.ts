import { describe, expect, it } from 'vitest';
import { FreshReads } from '../../../src/http/inbox/fresh-reads.js';

/** A load that returns its number once `finish` is called, counting how many were started. */
function heldLoads() {
  const finishers: Array<() => void> = [];
  let started = 0;
  const load = () => {
    const number = ++started;
    return new Promise<number>((resolve) => finishers.push(() => resolve(number)));
  };
  const finishNext = async () => {
    await new Promise((resolve) => setImmediate(resolve));
    finishers.shift()?.();
  };
  return { load, finishNext, started: () => started };
}

describe('FreshReads', () => {
  it('gives callers who ask during a read the next read, started after they asked, shared among them', async () => {
    const reads = new FreshReads<number>();
    const { load, finishNext, started } = heldLoads();
    const first = reads.read('run', load);
    const during = [reads.read('run', load), reads.read('run', load), reads.read('run', load)];
    expect(started()).toBe(1);
    await finishNext();
    expect(await first).toBe(1);
    await finishNext();
    expect(await Promise.all(during)).toEqual([2, 2, 2]);
    expect(started()).toBe(2);
  });

  it('starts a read afresh once none is under way, and keeps keys apart', async () => {
    const reads = new FreshReads<number>();
    const { load, finishNext, started } = heldLoads();
    const one = reads.read('run-1', load);
    const other = reads.read('run-2', load);
    expect(started()).toBe(2);
    await finishNext();
    await finishNext();
    expect([await one, await other]).toEqual([1, 2]);
    const later = reads.read('run-1', load);
    await finishNext();
    expect(await later).toBe(3);
  });

  it('lets a failed read fail its callers only: those who asked during it get the next read', async () => {
    const reads = new FreshReads<string>();
    let calls = 0;
    let fail: (error: Error) => void = () => undefined;
    const failing = reads.read('run', () => new Promise<string>((_, reject) => (fail = reject)));
    const during = reads.read('run', async () => `read ${++calls}`);
    fail(new Error('worker gone'));
    await expect(failing).rejects.toThrow('worker gone');
    expect(await during).toBe('read 1');
  });
});
