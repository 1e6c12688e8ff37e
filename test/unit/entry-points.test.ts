import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

/** The packages a fresh Node process loads to import `entry` (a file under the repository root). */
async function packagesLoadedBy(entry: string): Promise<string[]> {
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', path.join(root, 'test/helpers/print-loaded-modules.ts'), path.join(root, entry)],
    { cwd: root },
  );
  const files = JSON.parse(stdout) as string[];
  const packages = files.flatMap((file) => {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file);
    return match?.[1] ? [match[1]] : [];
  });
  return [...new Set(packages)].sort();
}

const workerOrBundler = ['@temporalio/worker', '@temporalio/core-bridge', 'webpack', '@swc/core', 'swc-loader'];

// Each check starts a fresh Node with tsx, which takes seconds on a busy machine.
describe('entry points', { timeout: 30_000 }, () => {
  it.each(['src/index.ts', 'src/client/index.ts'])(
    '%s loads the Temporal client but neither the worker nor a bundler',
    async (entry) => {
      const packages = await packagesLoadedBy(entry);

      expect(packages).toContain('@temporalio/client');
      expect(packages.filter((name) => workerOrBundler.includes(name))).toEqual([]);
    },
  );

  it('src/http/index.ts loads neither the worker nor a bundler', async () => {
    const packages = await packagesLoadedBy('src/http/index.ts');

    expect(packages).toContain('hono');
    expect(packages.filter((name) => workerOrBundler.includes(name))).toEqual([]);
  });

  it('the worker entry point does load the worker and the bundler, so the check above can see them', async () => {
    const packages = await packagesLoadedBy('src/worker/index.ts');

    expect(packages).toEqual(expect.arrayContaining(['@temporalio/worker', 'webpack']));
  });

  it('exports nothing internal from the worker entry point', async () => {
    const worker = await import('../../src/worker/index.js');

    expect(Object.keys(worker).sort()).toEqual([
      'PostgresConnectTimeoutError',
      'RelayPlugin',
      'bundleRelayWorkflows',
      'createFilePayloadStore',
      'createMemoryPayloadStore',
      'createPayloadStore',
      'createPostgresPayloadStore',
      'createRelayPlugin',
      'createWorker',
      'defaultPayloadRetentionMs',
      'encodedFailureConverterPath',
      'mcpTools',
      'relaySharedWorkflowModules',
      'startPayloadJanitor',
    ]);
  });

  it('keeps worker pieces out of the package root', async () => {
    const rootEntry = await import('../../src/index.js');

    expect(Object.keys(rootEntry)).not.toContain('createWorker');
    expect(Object.keys(rootEntry)).not.toContain('relaySharedWorkflowModules');
    expect(Object.keys(rootEntry)).toEqual(expect.arrayContaining(['RelayClient', 'defineTool', 'defineConfig']));
  });
});
