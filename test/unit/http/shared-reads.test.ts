import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SharedReads } from '../../../src/http/inbox/shared-reads.js';

beforeEach(() => {
  vi.useFakeTimers({ now: new Date('2026-12-05T10:00:00Z') });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('SharedReads', () => {
  it('shares a read, under way or done, with every caller of its key until it is maxAgeMs old', async () => {
    const reads = new SharedReads<string>(500);
    let loads = 0;
    const load = async () => `list ${++loads}`;
    const first = reads.read('acme', load);
    const alongside = reads.read('acme', load);
    expect(await first).toBe('list 1');
    expect(await alongside).toBe('list 1');
    vi.advanceTimersByTime(499);
    expect(await reads.read('acme', load)).toBe('list 1');
    vi.advanceTimersByTime(1);
    expect(await reads.read('acme', load)).toBe('list 2');
    expect(loads).toBe(2);
  });

  it('reads each key for itself: one tenant never gets another’s list', async () => {
    const reads = new SharedReads<string>(500);
    expect(await reads.read('acme', async () => 'acme list')).toBe('acme list');
    expect(await reads.read('globex', async () => 'globex list')).toBe('globex list');
    expect(await reads.read('acme', async () => 'not read')).toBe('acme list');
  });

  it('does not share a failed read past its failure: the next caller reads again', async () => {
    const reads = new SharedReads<string>(500);
    await expect(reads.read('acme', () => Promise.reject(new Error('visibility down')))).rejects.toThrow(
      'visibility down',
    );
    expect(await reads.read('acme', async () => 'read again')).toBe('read again');
  });
});
