import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

/** The behavior Relay-E's workflows run with under Worker Versioning, as the server reports it. */
export const autoUpgrade = temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_AUTO_UPGRADE;

/** Makes a build the deployment's current version, once the server has seen its worker poll (it refuses before). */
export async function makeCurrentVersion(
  client: Client,
  namespace: string,
  deploymentName: string,
  buildId: string,
): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      await client.workflowService.setWorkerDeploymentCurrentVersion({ namespace, deploymentName, buildId });
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** The build a workflow is on and the versioning behavior it runs with, as the server describes them. */
export async function versioningOf(client: Client, workflowId: string) {
  const { raw } = await client.workflow.getHandle(workflowId).describe();
  const info = raw.workflowExecutionInfo?.versioningInfo;
  return { buildId: info?.deploymentVersion?.buildId, behavior: info?.behavior };
}
