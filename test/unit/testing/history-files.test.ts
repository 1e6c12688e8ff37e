import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadHistories, recordHistory } from '../../../src/testing/replay-histories.js';

const recorded = path.join(import.meta.dirname, '../../fixtures/histories/smoke/smoke-workflow.json');
let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'relay-e-history-files-'));
});

afterEach(async () => {
  await rm(directory, { recursive: true });
});

describe('loadHistories', () => {
  it('reads a gzipped history (.json.gz) as the same history as its plain file', async () => {
    await copyFile(recorded, path.join(directory, 'run.json'));
    await writeFile(path.join(directory, 'run-again.json.gz'), gzipSync(await readFile(recorded)));
    const [again, plain] = await loadHistories(directory);
    expect(again?.file).toBe('run-again.json.gz');
    expect(plain?.file).toBe('run.json');
    expect(again?.history.events?.length).toBeGreaterThan(0);
    expect(again?.history).toEqual(plain?.history);
  });

  it('names a .json.gz file that is not gzipped', async () => {
    await copyFile(recorded, path.join(directory, 'mislabelled.json.gz'));
    await expect(loadHistories(directory)).rejects.toThrow(/^mislabelled\.json\.gz cannot be gunzipped: /);
  });

  it('refuses a folder with neither kind of history, which would check nothing', async () => {
    await writeFile(path.join(directory, 'notes.txt'), 'not a history');
    await expect(loadHistories(directory)).rejects.toThrow('No recorded histories (*.json, *.json.gz)');
  });
});

describe('recordHistory', () => {
  it('refuses a file name no replay reads, before asking Temporal anything', async () => {
    const handle = { client: {} as never, workflowId: 'run_1', describe: vi.fn() };
    for (const file of ['run.gz', 'run.txt', 'run']) {
      await expect(recordHistory(handle, path.join(directory, file))).rejects.toMatchObject({
        code: 'invalid_input',
        message: expect.stringContaining('recordHistory writes *.json or *.json.gz files') as unknown,
      });
    }
    expect(handle.describe).not.toHaveBeenCalled();
  });
});
