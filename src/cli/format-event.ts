import type { RunEvent } from '../shared/run-types.js';
import { oneLine } from './format-table.js';

const maxJsonLength = 160;

/** One readable line for a run event: sequence number, type, the tool call it concerns and what happened. */
export function formatEvent(event: RunEvent, options: { time?: boolean } = {}): string {
  const time = options.time ? `${event.at.slice(11, 23)}  ` : '';
  return `${time}#${String(event.seq).padEnd(3)} ${event.type.padEnd(24)} ${describeEvent(event)}`.trimEnd();
}

function describeEvent(event: RunEvent): string {
  switch (event.type) {
    case 'run_started':
      return `model ${event.model}, up to ${event.maxSteps} steps, tools: ${event.tools.join(', ')}`;
    case 'model_delta':
      return `step ${event.step} streams ${quote(event.text)}`;
    case 'model_responded': {
      const calls = event.toolCallCount === 1 ? '1 tool call' : `${event.toolCallCount} tool calls`;
      if (event.storedText)
        return `${calls}; ${quote(event.storedText.preview)} (${event.storedText.bytes} bytes, stored)`;
      return event.text ? `${calls}; ${quote(event.text)}` : calls;
    }
    case 'tool_call_validated': {
      const approval = event.approvalByRule ? ' (its approval rule decides)' : ' (needs approval)';
      return `${call(event)} ${compact(event.input)}${event.requiresApproval ? approval : ''}`;
    }
    case 'tool_validation_failed':
      return `${call(event)} ${event.error}`;
    case 'tool_awaiting_approval':
      return `${call(event)} ${compact(event.input)} until ${event.expiresAt}${deciders(event)}${event.destructiveHint ? ' (destructive)' : ''}`;
    case 'tool_approval_added':
      return `${call(event)}${by(event.approver)}${because(event.reason)}, ${event.approvals} of ${event.approvalsRequired} approvals`;
    case 'tool_approved': {
      const approvers = event.approvedBy ? by(event.approvedBy.join(' and ')) : by(event.approver);
      return `${call(event)}${approvers}${event.edited ? `, edited to ${compact(event.input)}` : ''}${because(event.reason)}`;
    }
    case 'tool_rejected':
      return `${call(event)}${by(event.approver)}${because(event.reason)}`;
    case 'tool_approval_timed_out':
      return `${call(event)} no decision by ${event.expiresAt}`;
    case 'decision_ignored': {
      const about = event.toolCallId !== undefined ? ` for ${event.toolName ?? 'call'} [${event.toolCallId}]` : '';
      const what = event.decision !== undefined ? `${event.decision} ` : '';
      return `signalled ${what}decision${about}${by(event.approver)} ignored: ${event.code}: ${event.error}`;
    }
    case 'tool_approval_not_required':
      return `${call(event)} runs without a human (its approval rule said so)`;
    case 'tool_approval_notified':
      return `${call(event)} ${event.notice} sent (webhook answered ${event.status}, attempt ${event.attempt})`;
    case 'tool_approval_notice_failed':
      return `${call(event)} ${event.notice} NOT sent after ${event.attempt} attempt(s): ${event.error}`;
    case 'tool_approval_notice_handed_off':
      return `${call(event)} ${event.notice} still in flight at the run's end: delivered by ${event.deliveredBy}`;
    case 'tool_succeeded':
      return `${call(event)} -> ${compact(event.output)}${event.truncated ? ' (truncated)' : ''}`;
    case 'tool_failed':
      return `${call(event)} ${event.errorType}: ${event.error}`;
    case 'tool_cancelled':
      return `${call(event)} ${cancelledStage[event.stage]}`;
    case 'run_completed':
      return event.stopReason;
    case 'run_failed':
      return event.code ? `${event.code}: ${event.error}` : event.error;
    case 'run_cancelled':
      return '';
    case 'transcript_compacted':
      return `${event.elidedResults} old tool outputs${event.elidedTexts ? ` and ${event.elidedTexts} texts` : ''} elided: ${event.bytesBefore} -> ${event.bytesAfter} bytes`;
    case 'model_context_resent':
      return `the worker lacked the stored model context, so the whole transcript was sent again (${event.error})`;
    case 'events_dropped':
      return `${event.dropped} older events no longer kept; the log goes on at #${event.firstKeptSeq}`;
  }
}

function call(event: { toolName: string; toolCallId: string }): string {
  return `${event.toolName} [${event.toolCallId}]`;
}

function by(approver: string | undefined): string {
  return approver ? ` by ${approver}` : '';
}

/** Who may decide a waiting call and how many must approve, when its event says. */
function deciders(event: { approvers?: string[]; approvalsRequired?: number }): string {
  const who = event.approvers ? `, approvers ${event.approvers.join(', ')}` : '';
  return event.approvalsRequired ? `${who}, ${event.approvalsRequired} approvals needed` : who;
}

function because(reason: string | undefined): string {
  return reason ? ` (${reason})` : '';
}

function quote(text: string): string {
  const line = oneLine(text);
  return JSON.stringify(line.length > maxJsonLength ? `${line.slice(0, maxJsonLength - 3)}...` : line);
}

/** JSON on one line, cut to keep the timeline readable. */
export function compact(value: unknown): string {
  const json = JSON.stringify(value) ?? 'undefined';
  return json.length > maxJsonLength ? `${json.slice(0, maxJsonLength - 3)}...` : json;
}

/** How a cancelled call's line ends, by the stage it was in. */
const cancelledStage = {
  checking_input: 'stopped while its input was checked',
  awaiting_approval: 'never decided',
  executing: 'stopped while running',
} as const;
