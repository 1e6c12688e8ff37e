import type { PendingApprovals } from '../client/list-pending-approvals.js';
import type { PendingApproval } from '../shared/run-types.js';
import { exitCodes, usageError } from './cli-error.js';
import { cliInvocation } from './cli-invocation.js';
import type { Command } from './command.js';
import { runConnectionOptions, runConnectionOptionsHelp, parseCommandArgs } from './command.js';
import { commandSummaries } from './command-summaries.js';
import { connectionHintFlags } from './connection-hints.js';
import { describeDecisionHints } from './decision-command.js';
import { compact } from './format-event.js';
import { formatTable } from './format-table.js';
import { readPositiveInteger } from './run-command.js';
import { connectRelayClient, readRunCommandSettings } from './temporal-settings.js';

const approvalsOptions = { ...runConnectionOptions, limit: { type: 'string' } } as const;

const defaultLimit = 100;
const cli = cliInvocation();

export const approvalsCommand: Command = {
  name: 'approvals',
  summary: commandSummaries.approvals,
  help: `Usage: ${cli} approvals [--tenant ID] [--limit N] [--json]

Lists the tenant's tool calls waiting for a human on the project's task queue (--task-queue, else the config's),
oldest request first, with the commands that decide them. Read from Temporal visibility (each waiting run keeps its
waiting calls in its memo), so no worker needs to be running. A run that does not keep them there is asked for its
snapshot; one that cannot answer within 5 s is named on standard error with why, and so is a limit that left
waiting runs out. With --json: {"approvals": [...],
"unanswered": [...], "hasMore": false}, as GET /v1/approvals answers.

Options:
  --limit N              read at most N waiting runs (default ${defaultLimit})

${runConnectionOptionsHelp}`,
  async run(argv) {
    const { values, positionals } = parseCommandArgs('approvals', argv, approvalsOptions);
    if (positionals.length > 0) throw usageError(`Usage: ${cli} approvals [--tenant ID] [--limit N]`);
    const limit = values.limit === undefined ? defaultLimit : readPositiveInteger('--limit', values.limit);
    const settings = await readRunCommandSettings(values);
    const client = await connectRelayClient(settings);
    try {
      const listing = await client.listPendingApprovals({
        tenantId: settings.tenantId,
        taskQueue: settings.taskQueue,
        limit,
      });
      listing.approvals.sort((a, b) => a.requestedAt.localeCompare(b.requestedAt));
      if (values.json) {
        process.stdout.write(`${JSON.stringify(listing)}\n`);
      } else {
        process.stdout.write(formatApprovals(listing, settings.tenantId, connectionHintFlags(values)));
        for (const { runId, error } of listing.unanswered) {
          process.stderr.write(`Run ${runId} waits for a human but did not say for which calls: ${error}\n`);
        }
        if (listing.hasMore) process.stderr.write(`More runs wait than the ${limit} read: raise --limit.\n`);
      }
      return exitCodes.ok;
    } finally {
      await client.close();
    }
  },
};

/**
 * The table `relay-e approvals` prints: a call whose tool names its approvers says who may decide it. The commands
 * that decide a call carry `flags`, the connection flags the command was given ({@link connectionHintFlags}), and
 * name the request by its `requestedAt` (shown whole, as `--requested-at` matches it), so a command typed from a
 * listing read before a run id was used again does not decide the new run's call.
 */
export function formatApprovals({ approvals }: PendingApprovals, tenantId: string, flags = ''): string {
  if (approvals.length === 0) return `No tool call of tenant ${tenantId} waits for a human.\n`;
  const rows = approvals.map((approval) => [
    approval.runId,
    approval.toolCallId,
    toolColumn(approval),
    approval.requestedAt,
    approval.expiresAt.replace('T', ' ').slice(0, 19),
    compact(approval.input),
  ]);
  const table = formatTable(['RUN', 'CALL', 'TOOL', 'REQUESTED AT', 'EXPIRES (UTC)', 'INPUT'], rows);
  return `${table}\nDecide:\n${describeDecisionHints('<run>', '<call>', flags, '<requested at>')}\n`;
}

/** The tool's name, with who may decide its call and how many approvals it has, when its tool says. */
function toolColumn(approval: PendingApproval): string {
  const notes = [
    approval.approvers ? `${approval.approvers.join(' or ')} only` : undefined,
    approval.approvalsRequired !== undefined
      ? `${approval.approvals?.length ?? 0} of ${approval.approvalsRequired} approvals`
      : undefined,
  ].filter(Boolean);
  return notes.length > 0 ? `${approval.toolName} (${notes.join('; ')})` : approval.toolName;
}
