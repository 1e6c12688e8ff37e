import { DefaultLogger } from '@temporalio/worker';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { bundleRelayWorkflows } from '../worker/relay-workflows.js';

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

/**
 * Relay-E's workflows bundled as `createWorker` bundles them, once per process (per test file under vitest): bundling
 * takes seconds, and test environments and replays in one file can share the result.
 */
export function relayWorkflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleRelayWorkflows({ logger: new DefaultLogger('WARN') });
  return bundle;
}
