import { describe, expect, it } from 'vitest';
import { CliError } from '../../../src/cli/cli-error.js';
import { exitCodes } from '../../../src/cli/exit-codes.js';
import { readWorkerDeployment, versionedWorkerOptions } from '../../../src/cli/worker-deployment.js';

describe('readWorkerDeployment', () => {
  it('is undefined when neither the flags nor the environment name a deployment', () => {
    expect(readWorkerDeployment({}, {})).toBeUndefined();
    expect(readWorkerDeployment({}, { RELAY_E_WORKER_DEPLOYMENT: '', RELAY_E_WORKER_BUILD_ID: '' })).toBeUndefined();
  });

  it('reads the environment, and the flags win over it', () => {
    const env = { RELAY_E_WORKER_DEPLOYMENT: 'bank', RELAY_E_WORKER_BUILD_ID: 'b1' };
    expect(readWorkerDeployment({}, env)).toEqual({ deploymentName: 'bank', buildId: 'b1' });
    expect(readWorkerDeployment({ 'build-id': 'b2' }, env)).toEqual({ deploymentName: 'bank', buildId: 'b2' });
  });

  it('refuses a deployment without a build id, and a build id without a deployment, as a usage error', () => {
    const noBuild = (() => {
      try {
        return readWorkerDeployment({ deployment: 'bank' }, {});
      } catch (error) {
        return error;
      }
    })();
    expect(noBuild).toBeInstanceOf(CliError);
    expect(noBuild).toMatchObject({ exitCode: exitCodes.usage });
    expect(String(noBuild)).toMatch(/--build-id \(or RELAY_E_WORKER_BUILD_ID\) is missing or empty/);
    expect(() => readWorkerDeployment({}, { RELAY_E_WORKER_BUILD_ID: 'b1' })).toThrow(
      /--deployment \(or RELAY_E_WORKER_DEPLOYMENT\) is missing or empty/,
    );
  });

  it('makes the worker a versioned member with the behavior Relay-E’s workflows need', () => {
    expect(versionedWorkerOptions({ deploymentName: 'bank', buildId: 'b1' })).toEqual({
      workerDeploymentOptions: {
        version: { deploymentName: 'bank', buildId: 'b1' },
        useWorkerVersioning: true,
        defaultVersioningBehavior: 'AUTO_UPGRADE',
      },
    });
  });
});
