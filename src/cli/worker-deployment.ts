import type { ParseArgsOptionsConfig } from 'node:util';
import type { WorkerOptions } from '@temporalio/worker';
import { usageError } from './cli-error.js';
import { envSetting } from './env-setting.js';

/** The Worker Deployment version a CLI worker polls as, under Worker Versioning. */
export interface WorkerDeployment {
  deploymentName: string;
  buildId: string;
}

export const workerDeploymentOptions = {
  deployment: { type: 'string' },
  'build-id': { type: 'string' },
} as const satisfies ParseArgsOptionsConfig;

export const workerDeploymentHelp = `Worker Versioning:
  --deployment NAME      poll as a version of this Worker Deployment (env RELAY_E_WORKER_DEPLOYMENT)
  --build-id ID          the version's build id, required with --deployment (env RELAY_E_WORKER_BUILD_ID)
  Runs move to the deployment's current version as it changes (AUTO_UPGRADE); make a build current with
  'temporal worker deployment set-current-version --deployment-name NAME --build-id ID'.`;

/** The deployment the flags or the environment name (flags win), or undefined when neither names one. */
export function readWorkerDeployment(
  values: { deployment?: string | undefined; 'build-id'?: string | undefined },
  env: NodeJS.ProcessEnv,
): WorkerDeployment | undefined {
  const deploymentName = values.deployment ?? envSetting(env, 'RELAY_E_WORKER_DEPLOYMENT');
  const buildId = values['build-id'] ?? envSetting(env, 'RELAY_E_WORKER_BUILD_ID');
  if (deploymentName === undefined && buildId === undefined) return undefined;
  if (!deploymentName || !buildId) {
    const missing = deploymentName
      ? '--build-id (or RELAY_E_WORKER_BUILD_ID)'
      : '--deployment (or RELAY_E_WORKER_DEPLOYMENT)';
    throw usageError(`Worker Versioning needs a deployment and a build id: ${missing} is missing or empty`);
  }
  return { deploymentName, buildId };
}

/**
 * The worker options that make a worker a versioned member of the deployment. AUTO_UPGRADE is the behavior
 * Relay-E's workflows need (see refusePinnedRelayWorkflows in the plugin).
 */
export function versionedWorkerOptions(deployment: WorkerDeployment): Pick<WorkerOptions, 'workerDeploymentOptions'> {
  return {
    workerDeploymentOptions: {
      version: deployment,
      useWorkerVersioning: true,
      defaultVersioningBehavior: 'AUTO_UPGRADE',
    },
  };
}
