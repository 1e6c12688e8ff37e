import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { BundleOptions, WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { RelayError } from '../shared/errors.js';

/** Bundles Relay-E's workflows once, for workers that should start without bundling (tests, several workers). */
export function bundleRelayWorkflows(
  options: Pick<BundleOptions, 'logger'> = {},
): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({
    ...options,
    workflowsPath: relayWorkflowsPath(),
    preloadModules: relaySharedWorkflowModules(),
  });
}

/**
 * Pure modules loaded once per workflow thread and shared by every cached run, instead of once per run: the tool
 * call validator and Zod beneath it cost about 1.2 MiB per cached run otherwise (bench/memory-per-run.ts), and the
 * closed-run record brings fflate, whose tables every run would build again. None holds per-run state, so sharing
 * cannot change a run's behaviour.
 */
export function relaySharedWorkflowModules(): string[] {
  return [
    resolveRelayModule('workflows/tool-call-validator'),
    resolveRelayModule('src/shared/run-input-schema'),
    resolveRelayModule('src/shared/closed-run-record'),
  ];
}

/** The file that holds Relay-E's workflows, next to this module whether it runs from source or from `dist`. */
export function relayWorkflowsPath(): string {
  return resolveRelayModule('workflows/index');
}

function resolveRelayModule(pathFromRoot: string): string {
  for (const extension of ['.ts', '.js']) {
    const path = fileURLToPath(new URL(`../../${pathFromRoot}${extension}`, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new RelayError('invalid_input', `Cannot find ${pathFromRoot} next to the Relay-E worker module`);
}
