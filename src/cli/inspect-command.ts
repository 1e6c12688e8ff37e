import type { HandedOffNotices } from '../client/read-handed-off-notices.js';
import { rethrowNamingTaskFailure } from '../client/workflow-task-failure.js';
import type { RunEvent, RunSnapshot } from '../shared/run-types.js';
import { exitCodes, usageError } from './cli-error.js';
import { cliInvocation } from './cli-invocation.js';
import type { Command } from './command.js';
import { runConnectionOptions, parseCommandArgs, scopedConnectionOptionsHelp } from './command.js';
import { commandSummaries } from './command-summaries.js';
import { connectionHintFlags } from './connection-hints.js';
import { compact, formatEvent } from './format-event.js';
import { connectRelayClient, readRunCommandSettings } from './temporal-settings.js';

const cli = cliInvocation();

export const inspectCommand: Command = {
  name: 'inspect',
  summary: commandSummaries.inspect,
  help: `Usage: ${cli} inspect <runId> [--json]

Shows the run's snapshot and its event timeline. An open run answers through workflow queries, so a worker
must be running for the task queue; a closed run is read from the record it left in its memo, without one
(events the record had to leave out are asked of a worker if one answers within 5 s, else a line says how
many are missing).
Notices the run handed off when it closed (approvers' notices still in flight) are shown with how each ended.
A run whose workers use Worker Versioning shows the build it is on (with --json: the snapshot's "versioning").
With --json: {"snapshot": {...}, "events": [...]}, and "handedOffNotices" when there are some.
With --tenant (or RELAY_E_TENANT), a run of another tenant counts as not found.

${scopedConnectionOptionsHelp}

A run whose workflow task fails because its history no longer replays with the workers' code is named as such,
with the command that resets it (docs/operations.md).

Exit codes: 0 shown, 3 no such run, 5 the run cannot answer.`,
  async run(argv) {
    const { values, positionals } = parseCommandArgs('inspect', argv, runConnectionOptions);
    const [runId, ...extra] = positionals;
    if (runId === undefined || extra.length > 0) throw usageError(`Usage: ${cli} inspect <runId>`);
    const settings = await readRunCommandSettings(values);
    const client = await connectRelayClient(settings);
    try {
      const scope = settings.tenantGiven ? { tenantId: settings.tenantId } : {};
      const {
        snapshot,
        events,
        handedOffNotices: handedOff,
      } = await client
        .inspect(runId, scope)
        .catch((error: unknown) =>
          rethrowNamingTaskFailure(error, runId, () => client.workflowTaskFailure(runId, scope)),
        );
      const shown = { snapshot, events, ...(handedOff.length > 0 ? { handedOffNotices: handedOff } : {}) };
      process.stdout.write(
        values.json
          ? `${JSON.stringify(shown)}\n`
          : describeRun(snapshot, events, handedOff, connectionHintFlags(values)),
      );
      return exitCodes.ok;
    } finally {
      await client.close();
    }
  },
};

/**
 * What `relay-e inspect` prints of a run. The commands that decide a pending call carry `flags`, the connection flags
 * the command was given ({@link connectionHintFlags}).
 */
export function describeRun(
  snapshot: RunSnapshot,
  events: readonly RunEvent[],
  handedOff: readonly HandedOffNotices[] = [],
  flags = '',
): string {
  const lines = [
    `Run      ${snapshot.runId}`,
    `Status   ${snapshot.status}${snapshot.stopReason ? ` (${snapshot.stopReason})` : ''}`,
    `Tenant   ${snapshot.tenantId}${snapshot.userId ? `, user ${snapshot.userId}` : ''}`,
    `Model    ${snapshot.model}`,
    `Steps    ${snapshot.step} of ${snapshot.maxSteps}; tokens ${snapshot.usage.inputTokens} in, ${snapshot.usage.outputTokens} out`,
    `Started  ${snapshot.startedAt}, updated ${snapshot.updatedAt}`,
  ];
  if (snapshot.versioning) {
    const { buildId, deploymentName, behavior } = snapshot.versioning;
    lines.push(`Version  build ${buildId} of Worker Deployment ${deploymentName} (${behavior})`);
  }
  for (const pending of snapshot.pendingApprovals) {
    // The request's time goes with the call, so a command typed after the run id was used again decides nothing new.
    const call = `${snapshot.runId} ${pending.toolCallId} --requested-at ${pending.requestedAt}`;
    lines.push(
      `Pending  ${pending.toolName} [${pending.toolCallId}] ${compact(pending.input)} until ${pending.expiresAt}`,
      `         ${cli} approve${flags} ${call}   |   ${cli} reject${flags} ${call}`,
    );
  }
  if (snapshot.error) lines.push(`Error    ${snapshot.error}`);
  lines.push('', 'Timeline (UTC)');
  for (const event of events) lines.push(`  ${formatEvent(event, { time: true })}`);
  for (const delivery of handedOff) lines.push('', ...describeHandedOff(delivery));
  if (snapshot.output !== undefined) lines.push('', 'Answer', snapshot.output);
  return `${lines.join('\n')}\n`;
}

/** The notices a run handed off when it closed, as the workflow delivering them last said. */
function describeHandedOff({ deliveredBy, notices, status, outcomes }: HandedOffNotices): string[] {
  const lines = [`Notices handed off to ${deliveredBy} (${status.toLowerCase()})`];
  if (!outcomes) return [...lines, ...notices.map((id) => `  ${id}  not ended yet`)];
  for (const ending of outcomes) {
    const how =
      ending.outcome === 'delivered'
        ? `delivered (${ending.status}, attempt ${ending.attempt})`
        : ending.outcome === 'failed'
          ? `given up after attempt ${ending.attempt}: ${ending.error}`
          : 'not sent: the tenant has no webhook';
    lines.push(`  ${ending.id}  ${how}`);
  }
  return lines;
}
