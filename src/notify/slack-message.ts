import type { ApprovalNotice } from '../shared/approval-notice.js';

/** The most characters of a call's input a Slack message shows; the inbox has it whole. */
const maxInputCharacters = 1_500;

/**
 * A notice as a Slack message for an incoming webhook (`{ text }`, in Slack's mrkdwn): which tool waits (or still
 * waits, as a reminder) or how its wait ended, in which run and tenant, the input to approve, and a link to the inbox when the worker knows it.
 */
export function slackMessageOf(notice: ApprovalNotice): { text: string } {
  const where = `in run \`${notice.runId}\` (tenant ${notice.tenantId})`;
  const link = notice.inboxUrl ? `\n<${notice.inboxUrl}|Open it in the inbox>` : '';
  if (notice.type === 'approval.added') {
    const reason = notice.reason ? ` (${escape(notice.reason)})` : '';
    const of = `${notice.approvals} of ${notice.approvalsRequired} approvals`;
    return {
      text:
        `:ballot_box_with_check: *${escape(notice.toolName)}* was approved by ${escape(notice.approver)}${reason} ` +
        `${where}: ${of}. It waits for another approver until ${notice.expiresAt}.${link}`,
    };
  }
  if (notice.type !== 'approval.decided') {
    const input = JSON.stringify(notice.input) ?? 'null';
    const shown = input.length > maxInputCharacters ? `${input.slice(0, maxInputCharacters)}…` : input;
    const destructive = notice.destructiveHint ? ' (its tool may destroy data)' : '';
    const who = deciders(notice);
    const [icon, waits] =
      notice.type === 'approval.requested'
        ? [':hourglass_flowing_sand:', 'waits for approval']
        : [':warning:', 'still waits for approval'];
    return {
      text:
        `${icon} *${escape(notice.toolName)}* ${waits} ${where}${destructive}, ` +
        `until ${notice.expiresAt}.${who}\n\`\`\`${escape(shown)}\`\`\`${link}`,
    };
  }
  const approvers = notice.approvedBy?.join(' and ') ?? notice.approver;
  const by = approvers ? ` by ${escape(approvers)}` : '';
  const reason = notice.reason ? `: ${escape(notice.reason)}` : '';
  const outcome = {
    approved: `:white_check_mark: *${escape(notice.toolName)}* was approved${by}${notice.edited ? ' with an edited input' : ''}`,
    rejected: `:x: *${escape(notice.toolName)}* was rejected${by}${reason}`,
    expired: `:alarm_clock: *${escape(notice.toolName)}* expired without a decision`,
    withdrawn: `:no_entry_sign: *${escape(notice.toolName)}* was withdrawn (${runEnding[notice.runStatus ?? 'ended']})`,
  }[notice.outcome];
  return { text: `${outcome} ${where}.${link}` };
}

/** Who may decide a waiting call, and how many of them must approve it, when its tool says. */
function deciders(notice: ApprovalNotice): string {
  const several = notice.approvalsRequired ? ` It needs ${notice.approvalsRequired} different approvers.` : '';
  const named = notice.approvers ? ` Decided by ${escape(notice.approvers.join(' or '))} only.` : '';
  return `${several}${named}`;
}

const runEnding = { cancelled: 'the run was cancelled', failed: 'the run failed', ended: 'the run ended' };

/** Slack's three control characters, escaped as its message format asks. */
function escape(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}
