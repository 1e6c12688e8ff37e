import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTestEnvironment } from '../../../src/testing/create-test-environment.js';
import { scriptedModel } from '../../../src/testing/scripted-model.js';

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("the test kit's local mode on a machine without the Temporal CLI", () => {
  it('says how to install the CLI, not to run scripts only a Relay-E checkout has', async () => {
    const emptyFolder = await mkdtemp(path.join(tmpdir(), 'relay-e-no-temporal-'));
    vi.stubEnv('TEMPORAL_CLI_PATH', '');
    vi.stubEnv('PATH', emptyFolder);
    try {
      const failure = createTestEnvironment({ mode: 'local', tools: [], models: { scripted: scriptedModel([]) } });
      await expect(failure).rejects.toThrow('No Temporal CLI found');
      await expect(failure).rejects.toThrow('go install github.com/temporalio/cli/cmd/temporal@v1.5.1');
      await expect(failure).rejects.not.toThrow(/Run `bash scripts\/test\.sh`/);
    } finally {
      await rm(emptyFolder, { recursive: true, force: true });
    }
  });
});
