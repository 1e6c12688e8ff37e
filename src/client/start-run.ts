import { randomUUID } from 'node:crypto';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
} from '@temporalio/client';
import type { agentRun } from '../../workflows/agent-run.js';
import { parseModelId } from '../model/model-registry.js';
import { RelayError } from '../shared/errors.js';
import { scopedRunId } from '../shared/run-ids.js';
import { agentRunInputSchema } from '../shared/run-input-schema.js';
import type { AgentRunInput } from '../shared/run-types.js';
import { relaySearchAttributes } from '../shared/search-attributes.js';
import { checkToolInput } from '../shared/tool-input.js';
import type { WorkerCatalog } from '../shared/worker-catalog.js';
import type { StartRunOptions } from './relay-client.js';
import type { RunAccess } from './run-access.js';

/** How long a catalog read serves startRun's check for runs it can serve (workers announce every 10 minutes). */
const catalogReuseMs = 5_000;

/**
 * Starts a run for `RelayClient.startRun`: its input checked, then refused if no worker serves it, then started
 * under the id it chose (scoped to its tenant) or a fresh one.
 */
export async function startRun(
  access: RunAccess,
  servedCheck: ServedRunCheck,
  options: StartRunOptions,
): Promise<{ runId: string }> {
  const { runId: chosenId, ...input } = options;
  const check = checkToolInput(agentRunInputSchema(), input);
  if (!check.success) {
    throw new RelayError('invalid_input', check.message.replace('Validation failed', 'Invalid run input'), {
      details: { issues: check.issues },
    });
  }
  await servedCheck.refuseWhatNoWorkerServes(input);
  const runId = chosenId === undefined ? `run_${randomUUID()}` : scopedRunId(input.tenantId, chosenId);
  try {
    await startWorkflow(access, runId, input);
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) {
      throw new RelayError('run_already_exists', `A run with id '${chosenId ?? runId}' already exists`, {
        cause: error,
        details: { runId },
      });
    }
    throw error;
  }
  return { runId };
}

/** startRun's check against what the workers serve, keeping the last catalog it read for the next few seconds. */
export class ServedRunCheck {
  /** The last worker catalog read for the check, and when. */
  private recentCatalog: { catalog: WorkerCatalog; readAt: number } | undefined;

  constructor(private readonly readWorkerCatalog: () => Promise<WorkerCatalog | undefined>) {}

  /**
   * Refuses a run no worker can serve. A catalog read in the last few seconds that serves the run answers without a
   * round trip; anything it would refuse, or no catalog at all, is read afresh, so a stale read never refuses.
   * Without a catalog nothing can be told, and the worker that picks the run up refuses what it lacks.
   */
  async refuseWhatNoWorkerServes(input: AgentRunInput): Promise<void> {
    const recent = this.recentCatalog;
    if (recent && Date.now() - recent.readAt < catalogReuseMs && unservedBy(input, recent.catalog) === undefined) {
      return;
    }
    const catalog = await this.readWorkerCatalog();
    this.recentCatalog = catalog ? { catalog, readAt: Date.now() } : undefined;
    const refusal = catalog && unservedBy(input, catalog);
    if (refusal) throw refusal;
  }
}

/** Why no worker in the catalog can serve the run: a tool in its allow-list none serves, or a model none has. */
function unservedBy(input: AgentRunInput, catalog: WorkerCatalog): RelayError | undefined {
  const served = new Set(catalog.tools.map((tool) => tool.name));
  const unknown = [...new Set(input.tools ?? [])].filter((name) => !served.has(name));
  if (unknown.length > 0) {
    const leftOut = (catalog.leftOut ?? []).filter((tool) => unknown.includes(tool.name));
    return new RelayError(
      'unknown_tool',
      `No worker serves the tool(s) ${unknown.map((name) => `'${name}'`).join(', ')} (served: ${[...served].join(', ') || 'none'})` +
        leftOut
          .map(
            (tool) =>
              `; a worker left out '${tool.name}' (source '${tool.source}', tool '${tool.tool}'): ${tool.reason}`,
          )
          .join(''),
      { details: { names: unknown, ...(leftOut.length > 0 ? { leftOut } : {}) } },
    );
  }
  const { provider } = parseModelId(input.model);
  if (!catalog.modelPrefixes.includes(provider)) {
    return new RelayError(
      'model_not_configured',
      `No worker serves models '${provider}:…' (served: ${catalog.modelPrefixes.map((prefix) => `${prefix}:…`).join(', ') || 'none'})`,
      { details: { model: input.model } },
    );
  }
  return undefined;
}

async function startWorkflow(access: RunAccess, runId: string, input: AgentRunInput): Promise<void> {
  await access.temporal.workflow.start<typeof agentRun>('agentRun', {
    workflowId: runId,
    // An id names one run for good: reusing it, even after the first run closed, would mix two runs' decisions.
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
    taskQueue: access.taskQueue,
    args: [input],
    memo: { model: input.model, prompt: summarizePrompt(input) },
    typedSearchAttributes: [
      { key: relaySearchAttributes.tenant, value: input.tenantId },
      ...(input.userId ? [{ key: relaySearchAttributes.user, value: input.userId }] : []),
      { key: relaySearchAttributes.status, value: 'running' },
      { key: relaySearchAttributes.pendingApprovals, value: 0 },
    ],
    staticSummary: `${input.model}: ${summarizePrompt(input)}`,
    staticDetails: describeRunForUi(input),
  });
}

/** The run's static details in the Temporal Web UI (markdown): tenant, user, model and the tools it may use. */
function describeRunForUi(input: AgentRunInput): string {
  const tools = input.tools ? input.tools.map((name) => `\`${name}\``).join(', ') : "all of the worker's tools";
  return [
    `**Relay-E agent run** for tenant \`${input.tenantId}\`${input.userId ? `, user \`${input.userId}\`` : ''}`,
    '',
    `- model: \`${input.model}\``,
    `- tools: ${tools}`,
  ].join('\n');
}

function summarizePrompt(input: AgentRunInput): string {
  const lastUser = [...(input.messages ?? [])].reverse().find((message) => message.role === 'user');
  const text = input.prompt ?? (lastUser && 'content' in lastUser ? lastUser.content : '');
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
