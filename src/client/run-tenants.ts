import type { Client } from '@temporalio/client';
import { decodeTypedSearchAttributes } from '@temporalio/common/lib/converter/payload-search-attributes.js';
import { relaySearchAttributes } from '../shared/search-attributes.js';
import { isWorkflowNotFound } from './is-workflow-not-found.js';

/** How many runs' tenants a lookup remembers; a run's tenant never changes, so a remembered one stays true. */
const defaultMaxRemembered = 10_000;

/** Finds the tenant of a run by id, for a codec server that decrypts for a tenant only its own runs. */
export interface RunTenantLookup {
  /** The run's tenant (its `RelayTenant` search attribute); undefined when there is no such run or it has none. */
  tenantOf(runId: string): Promise<string | undefined>;
  /** Closes the connection, if one was opened. */
  close(): Promise<void>;
}

/**
 * A lookup that describes runs with a client it opens on first use (so a codec server can start before Temporal) and
 * remembers the tenants it found; a run not found is asked again next time, since it may be started later.
 */
export function createRunTenantLookup(
  connect: () => Promise<{ temporal: Client; close(): Promise<void> }>,
  maxRemembered = defaultMaxRemembered,
): RunTenantLookup {
  let connecting: ReturnType<typeof connect> | undefined;
  const remembered = new Map<string, string>();
  return {
    async tenantOf(runId) {
      const known = remembered.get(runId);
      if (known !== undefined) return known;
      connecting ??= connect();
      const { temporal } = await connecting;
      // The raw describe: search attributes are never encrypted, so no payload of the run needs decrypting here.
      const tenant = await temporal.workflowService
        .describeWorkflowExecution({ namespace: temporal.options.namespace, execution: { workflowId: runId } })
        .then(
          (description) =>
            decodeTypedSearchAttributes(description.workflowExecutionInfo?.searchAttributes?.indexedFields).get(
              relaySearchAttributes.tenant,
            ),
          (error: unknown) => {
            if (isWorkflowNotFound(error)) return undefined;
            throw error;
          },
        );
      if (tenant === undefined) return undefined;
      if (remembered.size >= maxRemembered) remembered.delete(remembered.keys().next().value as string);
      remembered.set(runId, tenant);
      return tenant;
    },
    async close() {
      await (await connecting?.catch(() => undefined))?.close();
    },
  };
}
