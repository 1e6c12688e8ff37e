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

type TenantClient = { temporal: Client; close(): Promise<void> };

/**
 * A lookup that describes runs with a client it opens on first use (so a codec server can start before Temporal) and
 * remembers the tenants it found; a run not found is asked again next time, since it may be started later. A failed
 * connection is tried again at the next lookup, and lookups of a run already being asked share its answer.
 */
export function createRunTenantLookup(
  connect: () => Promise<TenantClient>,
  maxRemembered = defaultMaxRemembered,
): RunTenantLookup {
  let connecting: Promise<TenantClient> | undefined;
  const remembered = new Map<string, string>();
  const asking = new Map<string, Promise<string | undefined>>();
  const connected = (): Promise<TenantClient> =>
    (connecting ??= connect().catch((error: unknown) => {
      // Kept, a refusal while Temporal restarts would answer every later lookup until this process restarts.
      connecting = undefined;
      throw error;
    }));
  const ask = async (runId: string): Promise<string | undefined> => {
    const tenant = await describeTenant((await connected()).temporal, runId);
    if (tenant === undefined) return undefined;
    if (remembered.size >= maxRemembered) remembered.delete(remembered.keys().next().value as string);
    remembered.set(runId, tenant);
    return tenant;
  };
  return {
    tenantOf(runId) {
      const known = remembered.get(runId);
      if (known !== undefined) return Promise.resolve(known);
      const inFlight = asking.get(runId);
      if (inFlight) return inFlight;
      const answer = ask(runId).finally(() => asking.delete(runId));
      asking.set(runId, answer);
      return answer;
    },
    async close() {
      await (await connecting?.catch(() => undefined))?.close();
    },
  };
}

/** The run's `RelayTenant`, from the raw describe: search attributes are never encrypted, so nothing is decrypted. */
function describeTenant(temporal: Client, runId: string): Promise<string | undefined> {
  return temporal.workflowService
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
}
