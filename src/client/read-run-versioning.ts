import type { WorkflowExecutionDescription } from '@temporalio/client';
import protos from '@temporalio/proto';
import type { RunVersioning } from '../shared/run-types.js';

// The package is CommonJS: its namespaces are read from the default export.
const { VersioningBehavior } = protos.temporal.api.enums.v1;

const behaviors = {
  [VersioningBehavior.VERSIONING_BEHAVIOR_AUTO_UPGRADE]: 'AUTO_UPGRADE',
  [VersioningBehavior.VERSIONING_BEHAVIOR_PINNED]: 'PINNED',
} as const;

/**
 * What the server's description of a run says of its version (the raw response: nothing of the run needs
 * decoding); undefined for a run whose workers are not versioned.
 */
export function runVersioningOf(description: WorkflowExecutionDescription): RunVersioning | undefined {
  const info = description.raw.workflowExecutionInfo?.versioningInfo;
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
