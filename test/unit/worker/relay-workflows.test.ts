import { DefaultLogger } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { scriptedModel } from '../../../src/testing/scripted-model.js';
import { RelayPlugin, bundleRelayWorkflows, relaySharedWorkflowModules } from '../../../src/worker/index.js';
import { compileWorkflowSourceAsBuilt } from '../../../src/worker/relay-workflows.js';

type WebpackConfiguration = Parameters<typeof compileWorkflowSourceAsBuilt>[0];

/** The shape of the SDK bundler's TypeScript rule: swc-loader compiling for ES2017. */
function sdkLikeConfig(): WebpackConfiguration {
  return {
    module: {
      rules: [
        { test: /\.js$/, enforce: 'pre', use: ['source-map-loader'] },
        {
          test: /\.ts$/,
          use: { loader: '/x/node_modules/swc-loader/index.js', options: { jsc: { target: 'es2017' } } },
        },
      ],
    },
  };
}

const swcTarget = (config: WebpackConfiguration) =>
  (config.module?.rules?.[1] as { use: { options: { jsc: { target: string } } } }).use.options.jsc.target;

describe('the workflow bundle', () => {
  it('compiles TypeScript workflow source for ES2022, as the package build does, and leaves other rules alone', () => {
    const config = compileWorkflowSourceAsBuilt(sdkLikeConfig());
    expect(swcTarget(config)).toBe('es2022');
    expect(config.module?.rules?.[0]).toEqual(sdkLikeConfig().module?.rules?.[0]);
  });

  it('keeps object spreads and class fields native in the bundled Relay-E workflows', async () => {
    const { code } = await bundleRelayWorkflows({ logger: new DefaultLogger('WARN') });
    // swc's helpers for ES2017 and below; their absence means the syntax stayed native.
    expect(code).not.toMatch(/function _object_spread\(/);
    expect(code).not.toMatch(/function _define_property\(/);
    expect(code).toMatch(/export async function agentRun\(|async function agentRun\(/);
  }, 60_000);

  it("applies when the plugin bundles, and the worker's own webpack hook runs after it", async () => {
    const plugin = await RelayPlugin.create({
      tools: [],
      models: { scripted: scriptedModel([]) },
      checkSearchAttributes: false,
    });
    const targetsSeen: string[] = [];
    const configured = await plugin.configureWorker({
      taskQueue: 'bundle-settings',
      bundlerOptions: {
        webpackConfigHook: (config) => {
          targetsSeen.push(swcTarget(config));
          return config;
        },
      },
    });
    const hook = configured.bundlerOptions?.webpackConfigHook;
    expect(hook).toBeDefined();
    expect(swcTarget(hook?.(sdkLikeConfig()) ?? {})).toBe('es2022');
    expect(targetsSeen).toEqual(['es2022']);
  });

  it('preloads the shared modules for a worker with its own workflows file, and leaves its compiling alone', async () => {
    const plugin = await RelayPlugin.create({
      tools: [],
      models: { scripted: scriptedModel([]) },
      checkSearchAttributes: false,
    });
    const configured = await plugin.configureWorker({
      taskQueue: 'own-workflows',
      workflowsPath: '/team/workflows.ts',
      bundlerOptions: { preloadModules: ['/team/shared.ts'] },
    });

    expect(configured.workflowsPath).toBe('/team/workflows.ts');
    expect(configured.bundlerOptions?.preloadModules).toEqual(['/team/shared.ts', ...relaySharedWorkflowModules()]);
    expect(configured.bundlerOptions?.webpackConfigHook).toBeUndefined();
    expect(relaySharedWorkflowModules()).toContainEqual(expect.stringMatching(/workflows[/\\]index\.(ts|js)$/));
  });
});
