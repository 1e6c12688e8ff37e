import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnvironment } from '../../../src/testing/create-test-environment.js';
import {
  cachedTestServerPath,
  findTestServerExecutable,
  TestEnvironmentError,
} from '../../../src/testing/find-test-server-executable.js';

let cacheDirectory: string;

beforeAll(async () => {
  cacheDirectory = await mkdtemp(path.join(os.tmpdir(), 'relay-e-cache-'));
});

afterAll(async () => {
  await rm(cacheDirectory, { recursive: true, force: true });
});

describe('finding the time-skipping test server', () => {
  it('says what to install, and that the local mode needs none of it, when nothing is cached', async () => {
    const failure = await findTestServerExecutable({ RELAY_E_CACHE_DIR: cacheDirectory }).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(TestEnvironmentError);
    const { message } = failure as TestEnvironmentError;
    expect(message).toContain('Java 17');
    expect(message).toContain('apt-get install default-jdk-headless maven');
    expect(message).toContain('relay_e_ensure_test_server');
    expect(message).toContain("mode 'local'");
  });

  it('keeps a time-skipping test environment from starting without it', async () => {
    const saved = { ...process.env };
    process.env['RELAY_E_CACHE_DIR'] = path.join(cacheDirectory, 'empty');
    delete process.env['TEMPORAL_TEST_SERVER_PATH'];
    try {
      await expect(createTestEnvironment({ mode: 'time-skipping', models: {} })).rejects.toThrow(TestEnvironmentError);
    } finally {
      process.env = saved;
    }
  });

  it('uses the wrapper that relay_e_ensure_test_server caches', async () => {
    const wrapper = cachedTestServerPath({ RELAY_E_CACHE_DIR: cacheDirectory });
    await mkdir(path.dirname(wrapper), { recursive: true });
    await writeFile(wrapper, '#!/bin/sh\n');
    await chmod(wrapper, 0o755);
    await expect(findTestServerExecutable({ RELAY_E_CACHE_DIR: cacheDirectory })).resolves.toBe(wrapper);
  });

  it('prefers TEMPORAL_TEST_SERVER_PATH, and refuses one that is not an executable file', async () => {
    const explicit = path.join(cacheDirectory, 'not-executable');
    await writeFile(explicit, '');
    const failure = await findTestServerExecutable({
      RELAY_E_CACHE_DIR: cacheDirectory,
      TEMPORAL_TEST_SERVER_PATH: explicit,
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TestEnvironmentError);
    expect((failure as Error).message).toContain(`TEMPORAL_TEST_SERVER_PATH is ${explicit}`);
  });
});
