import { bundleWorkflowCode } from '@temporalio/worker';
import type {
  BundleOptions,
  WorkerOptions,
  WorkflowBundleOption,
  WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { encodedFailureConverterPath } from '../security/with-encryption.js';
import { moduleFileNextTo } from './module-file.js';

/** Options of {@link bundleRelayWorkflows}. */
export interface BundleRelayWorkflowsOptions extends Pick<BundleOptions, 'logger'> {
  /**
   * Whether the workers given the bundle encrypt (`encryption`): the bundle then holds the failure converter that
   * encryption adds, so the failures workflows write (a failed run's error) are encrypted too. A bundle without it
   * still runs on such a worker, but writes those failures in the clear. No keys go into the bundle.
   * @default false
   */
  encryption?: boolean;
}

/** Bundles Relay-E's workflows once, for workers that should start without bundling (tests, several workers). */
export function bundleRelayWorkflows(options: BundleRelayWorkflowsOptions = {}): Promise<WorkflowBundleWithSourceMap> {
  const { encryption = false, ...bundleOptions } = options;
  return bundleWorkflowCode({
    ...bundleOptions,
    ...(encryption ? { failureConverterPath: encodedFailureConverterPath() } : {}),
    workflowsPath: relayWorkflowsPath(),
    preloadModules: relaySharedWorkflowModules(),
    webpackConfigHook: compileWorkflowSourceAsBuilt,
  });
}

/**
 * Whether a bundle was made without a failure converter, so its workflows write their failures (a failed run's error)
 * with Temporal's default one, in the clear. Read from the module the SDK's bundler puts in place of a converter it
 * was not given, which its development build names; a bundle given by path, or built otherwise, is never said to lack
 * one.
 */
export function bundlesNoFailureConverter(bundle: WorkflowBundleOption): boolean {
  return 'code' in bundle && bundle.code.includes('__temporal_custom_failure_converter (ignored)');
}

type WebpackConfiguration = Parameters<NonNullable<BundleOptions['webpackConfigHook']>>[0];

/**
 * The SDK's bundler compiles TypeScript workflow files with swc for ES2017, which turns object spreads, class fields
 * and optional chaining into helper calls; the package's own build (tsconfig.json, ES2023) keeps them native. Compiled
 * for ES2022 (the last target swc names, and ES2023 added no syntax to lower), workflows run from source (tests,
 * benchmarks, `tsx`) are the same code as from `dist`.
 */
export function compileWorkflowSourceAsBuilt(config: WebpackConfiguration): WebpackConfiguration {
  for (const rule of config.module?.rules ?? []) {
    if (!rule || typeof rule !== 'object' || typeof rule.use !== 'object' || Array.isArray(rule.use)) continue;
    const use = rule.use as { loader?: string; options?: { jsc?: { target?: string } } };
    if (use.loader?.includes('swc-loader') && use.options?.jsc) use.options.jsc.target = 'es2022';
  }
  return config;
}

/**
 * Modules loaded once per workflow thread and shared by every cached run, instead of once per run
 * (bench/memory-per-run.ts measures the difference): Relay-E's workflows with every module they import, each of
 * which a run would otherwise load again with its export getters and module scope; the tool call validator with Zod
 * beneath it; the closed-run record with fflate, whose tables every run would build again. The SDK freezes what they
 * export. None holds per-run state (their caches are keyed by a run's own objects, or hold what any run may share,
 * as compiled schemas), so sharing cannot change a run's behaviour.
 */
export function relaySharedWorkflowModules(): string[] {
  return [
    resolveRelayModule('workflows/tool-call-validator'),
    resolveRelayModule('src/shared/run-input-schema'),
    resolveRelayModule('src/shared/closed-run-record'),
    resolveRelayModule('workflows/index'),
  ];
}

/** `options` with {@link relaySharedWorkflowModules} preloaded after the modules the worker already preloads. */
export function withRelaySharedModules(options: WorkerOptions): WorkerOptions {
  const preloadModules = [...(options.bundlerOptions?.preloadModules ?? []), ...relaySharedWorkflowModules()];
  return { ...options, bundlerOptions: { ...options.bundlerOptions, preloadModules } };
}

/** The file that holds Relay-E's workflows, next to this module whether it runs from source or from `dist`. */
export function relayWorkflowsPath(): string {
  return resolveRelayModule('workflows/index');
}

function resolveRelayModule(pathFromRoot: string): string {
  return moduleFileNextTo(import.meta.url, `../../${pathFromRoot}`);
}
