import { DefaultLogger } from '@temporalio/worker';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { bundleRelayWorkflows } from '../worker/relay-workflows.js';

/** The bundles made so far: without, and with, encryption's failure converter. */
const bundles = new Map<boolean, Promise<WorkflowBundleWithSourceMap>>();

/**
 * Relay-E's workflows bundled as `createWorker` bundles them, once per process (per test file under vitest): bundling
 * takes seconds, and test environments and replays in one file can share the result. With `encryption`, the bundle
 * holds the failure converter that encryption adds, so the failures workflows write are encrypted too.
 */
export function relayWorkflowBundle(options: { encryption?: boolean } = {}): Promise<WorkflowBundleWithSourceMap> {
  const encryption = options.encryption ?? false;
  let bundle = bundles.get(encryption);
  if (!bundle) {
    bundle = bundleRelayWorkflows({ logger: new DefaultLogger('WARN'), encryption });
    bundles.set(encryption, bundle);
  }
  return bundle;
}
