import type { Client } from '@temporalio/client';
import protos from '@temporalio/proto';

/** The Worker Deployment version a run's workflow is on, when its workers run under Worker Versioning. */
export interface RunVersioning {
  deploymentName: string;
  buildId: string;
  /** How the run follows new versions: `AUTO_UPGRADE` for Relay-E's workflows. */
  behavior: 'AUTO_UPGRADE' | 'PINNED' | 'UNSPECIFIED';
}

// The package is CommonJS: its namespaces are read from the default export.
const { VersioningBehavior } = protos.temporal.api.enums.v1;

const behaviors = {
  [VersioningBehavior.VERSIONING_BEHAVIOR_AUTO_UPGRADE]: 'AUTO_UPGRADE',
  [VersioningBehavior.VERSIONING_BEHAVIOR_PINNED]: 'PINNED',
} as const;

/**
 * What the server says of a run's version (the raw describe: nothing of the run needs decoding); undefined for a run
 * whose workers are not versioned.
 */
export async function readRunVersioning(temporal: Client, runId: string): Promise<RunVersioning | undefined> {
  const description = await temporal.workflowService.describeWorkflowExecution({
    namespace: temporal.options.namespace,
    execution: { workflowId: runId },
  });
  const info = description.workflowExecutionInfo?.versioningInfo;
  const version = info?.deploymentVersion;
  if (!version?.buildId) return undefined;
  const behavior =
    info?.behavior === undefined || info.behavior === null
      ? undefined
      : behaviors[info.behavior as keyof typeof behaviors];
  return {
    deploymentName: version.deploymentName ?? '',
    buildId: version.buildId,
    behavior: behavior ?? 'UNSPECIFIED',
  };
}
