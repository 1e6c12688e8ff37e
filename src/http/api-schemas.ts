import { z } from '@hono/zod-openapi';
import { agentRunInputSchema } from '../shared/run-input-schema.js';
import { maxDecisionReasonLength } from '../shared/run-types.js';
import type { RunEventType } from '../shared/run-types.js';
import { chosenRunIdPattern, chosenRunIdRule, maxRunIdLength } from '../shared/run-ids.js';

const { tenantId: _tenantId, ...runInputShape } = agentRunInputSchema().shape;

/** `POST /v1/runs`: a run's input without `tenantId` (the API key decides the tenant), and an optional id. */
export const startRunRequestSchema = z
  .strictObject({
    ...runInputShape,
    runId: z
      .string()
      .regex(chosenRunIdPattern, { message: `Expected ${chosenRunIdRule}` })
      .optional()
      .openapi({
        description:
          "An id of your choosing: the run's id becomes `<tenant>~<runId>`, so tenants never share one. A fresh `run_<uuid>` when absent. While Temporal keeps its run, closed or not, the id is refused with 409 `run_already_exists`; after the namespace's retention it can start a new run.",
      }),
  })
  .openapi('StartRunRequest', {
    description: 'Give `prompt` or `messages`. The tenant comes from the API key; unknown fields are refused.',
  });

export const startRunResponseSchema = z.object({ runId: z.string() }).openapi('StartRunResponse');

/** Every id the API can create (a chosen id scoped by the longest tenant id), and nothing longer. */
export const runIdParamsSchema = z.object({
  id: z
    .string()
    .min(1)
    .max(maxRunIdLength)
    .openapi({
      param: { name: 'id', in: 'path' },
      example: 'run_5f0c…',
      description: `The run's id: at most ${maxRunIdLength} characters, the longest \`startRun\` gives; a longer one is refused (422) before Temporal is asked.`,
    }),
});

export const storedPayloadParamsSchema = runIdParamsSchema.extend({
  ref: z
    .string()
    .regex(/^sha256:[0-9a-f]{64}$/, { message: "Expected a stored payload's ref, 'sha256:' and 64 hex digits" })
    .openapi({ param: { name: 'ref', in: 'path' }, example: 'sha256:9f86d081…' }),
});

const runStatusSchema = z.enum(['running', 'awaiting_approval', 'completed', 'failed', 'cancelled']);

const tokenUsageSchema = z.object({ inputTokens: z.number().int(), outputTokens: z.number().int() });

const pendingApprovalSchema = z
  .object({
    toolCallId: z.string(),
    toolName: z.string(),
    input: z.unknown().openapi({ description: 'The validated input that runs if approved unchanged.' }),
    step: z.number().int(),
    requestedAt: z.string(),
    expiresAt: z.string(),
    source: z
      .object({ kind: z.literal('mcp'), server: z.string(), tool: z.string() })
      .optional()
      .openapi({ description: 'Where the tool comes from, for tools of an MCP server.' }),
    destructiveHint: z
      .boolean()
      .optional()
      .openapi({ description: "The tool's author says it may destroy or overwrite data." }),
    approvers: z
      .array(z.string())
      .optional()
      .openapi({ description: 'The only approvers (API key names) who may decide it, when its tool names them.' }),
    approvalsRequired: z.number().int().optional().openapi({
      description: 'How many different approvers must approve it, when its tool asks for more than one.',
    }),
    approvals: z
      .array(z.object({ approver: z.string(), at: z.string(), reason: z.string().optional() }).openapi('GivenApproval'))
      .optional()
      .openapi({ description: 'The approvals it has so far, oldest first, when it needs more than one.' }),
  })
  .openapi('PendingApproval');

export const runSnapshotSchema = z
  .object({
    runId: z.string(),
    tenantId: z.string(),
    userId: z.string().optional(),
    sessionId: z.string().optional(),
    model: z.string(),
    status: runStatusSchema,
    stopReason: z.enum(['final_answer', 'max_steps', 'cancelled', 'error']).optional(),
    step: z.number().int(),
    maxSteps: z.number().int(),
    pendingApprovals: z.array(pendingApprovalSchema),
    usage: tokenUsageSchema,
    output: z.string().optional(),
    error: z.string().optional(),
    startedAt: z.string(),
    updatedAt: z.string(),
    lastEventSeq: z.number().int(),
    versioning: z
      .object({
        deploymentName: z.string(),
        buildId: z.string(),
        behavior: z.enum(['AUTO_UPGRADE', 'PINNED', 'UNSPECIFIED']),
      })
      .optional()
      .openapi('RunVersioning', {
        description: 'The Worker Deployment build the run is on, when its workers use Worker Versioning.',
      }),
  })
  .openapi('RunSnapshot');

export const listRunsQuerySchema = z.object({
  status: runStatusSchema.optional().openapi({ description: 'Only runs with this status.' }),
  pendingApprovals: z
    .enum(['true', 'false'])
    .optional()
    .openapi({ description: '`true`: only runs with a tool call waiting for a human; `false`: only runs without.' }),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .optional()
    .openapi({ description: 'Runs on a page at most.', default: 20 }),
  cursor: z
    .string()
    .regex(/^[\w.-]{1,4096}$/, { message: 'Expected the nextCursor of a previous page' })
    .optional()
    .openapi({ description: 'The `nextCursor` of the previous page; the same filters must be sent again.' }),
});

const runListingSchema = z
  .object({
    runId: z.string(),
    status: runStatusSchema,
    pendingApprovalCount: z.number().int().openapi({ description: 'Tool calls waiting for a human; 0 once ended.' }),
    userId: z.string().optional(),
    model: z.string().optional(),
    prompt: z.string().optional().openapi({ description: 'The start of the prompt.' }),
    startedAt: z.string(),
    closedAt: z.string().optional(),
  })
  .openapi('RunListing');

export const runPageSchema = z
  .object({
    runs: z.array(runListingSchema),
    nextCursor: z.string().optional().openapi({ description: 'Absent on the last page.' }),
  })
  .openapi('RunPage', {
    description:
      'Open runs come first, newest started first, then closed runs, newest closed first (Temporal visibility’s ' +
      'order). Visibility lags a run by a moment; the snapshot does not.',
  });

/** Every run event type, named once each: a type the engine adds and this list lacks fails to compile. */
const runEventTypeNames = Object.keys({
  run_started: true,
  model_delta: true,
  model_responded: true,
  tool_call_validated: true,
  tool_validation_failed: true,
  tool_awaiting_approval: true,
  tool_approval_not_required: true,
  tool_approval_added: true,
  tool_approved: true,
  tool_rejected: true,
  tool_approval_timed_out: true,
  decision_ignored: true,
  tool_approval_notified: true,
  tool_approval_notice_failed: true,
  tool_approval_notice_handed_off: true,
  tool_succeeded: true,
  tool_failed: true,
  tool_cancelled: true,
  run_completed: true,
  run_failed: true,
  run_cancelled: true,
  transcript_compacted: true,
  model_context_resent: true,
  events_dropped: true,
} satisfies Record<RunEventType, true>) as [RunEventType, ...RunEventType[]];

export const runEventSchema = z
  .looseObject({
    seq: z
      .number()
      .int()
      .openapi({
        description:
          'Strictly increasing from 1; also the SSE `id`. An ephemeral `model_delta` has no `id` and repeats the ' +
          'last durable event’s seq.',
      }),
    at: z.string(),
    step: z.number().int(),
    type: z.enum(runEventTypeNames),
    toolCallId: z.string().optional(),
    toolName: z.string().optional(),
  })
  .openapi('RunEvent', { description: 'The `data:` of one server-sent event; its `event:` is `type`.' });

export const runEventsQuerySchema = z.object({
  after: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .openapi({ description: 'Only events with a higher `seq`; the `Last-Event-ID` header wins when both are sent.' }),
});

export const runEventsHeadersSchema = z.object({
  'last-event-id': z
    .string()
    .regex(/^\d{1,15}$/, { message: 'Expected the seq of the last event received' })
    .optional()
    .openapi({ description: 'The `seq` of the last event received, as browsers send it on reconnect.' }),
});

const toolCallIdSchema = z.string().min(1).max(256);
// The run keeps no more of a reason than this: a longer one is refused, not cut short behind the caller's back.
const reasonSchema = z.string().max(maxDecisionReasonLength).optional();
const requestedAtSchema = z
  .string()
  .max(64)
  .optional()
  .openapi({
    description:
      'The `requestedAt` of the waiting call this decision was made on: when given, the decision is refused (409 ' +
      '`approval_not_pending`) unless that call waits under `toolCallId` now, as after a run id was used again.',
  });

export const approveRequestSchema = z
  .strictObject({
    toolCallId: toolCallIdSchema,
    input: z.unknown().optional().openapi({ description: "Edited arguments; refused if they fail the tool's schema." }),
    reason: reasonSchema,
    requestedAt: requestedAtSchema,
  })
  .openapi('ApproveRequest', { description: 'The approver recorded is the caller, from the API key.' });

export const rejectRequestSchema = z
  .strictObject({ toolCallId: toolCallIdSchema, reason: reasonSchema, requestedAt: requestedAtSchema })
  .openapi('RejectRequest', { description: 'The approver recorded is the caller, from the API key.' });

export const approvalOutcomeSchema = z
  .object({
    toolCallId: z.string(),
    toolName: z.string(),
    decision: z.enum(['approve', 'reject']),
    input: z.unknown().optional(),
    approvals: z.number().int().optional().openapi({
      description: 'For a call that needs several approvals: how many it has with this one.',
    }),
    approvalsRequired: z.number().int().optional().openapi({
      description: 'For a call that needs several approvals: how many. Below it, the call still waits for another.',
    }),
  })
  .openapi('ApprovalOutcome');

export const cancelRequestSchema = z
  .strictObject({
    reason: reasonSchema.openapi({
      description: "Why; Temporal records it on the run's `WorkflowExecutionCancelRequested` event.",
    }),
  })
  .openapi('CancelRequest', {
    description:
      "Optional: no body, or `{}`, cancels without a reason. Temporal records the caller (the API key's name, else " +
      "`tenant:<id>`) as the cancel request's identity, `relay-e: <name>`.",
  });

export const cancelResponseSchema = z
  .object({
    runId: z.string(),
    status: z.enum(['cancelling', 'completed', 'failed', 'cancelled']),
  })
  .openapi('CancelResponse', {
    description: "`cancelling` when the request reached the run; the run's final status when it had already ended.",
  });

export const approvalsQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(1_000).optional().openapi({ description: 'Runs to read at most.' }),
});

export const approvalsResponseSchema = z
  .object({
    approvals: z.array(
      pendingApprovalSchema.extend({
        runId: z.string(),
        model: z.string(),
        userId: z.string().optional(),
        sessionId: z.string().optional(),
      }),
    ),
    unanswered: z.array(z.object({ runId: z.string(), error: z.string() })).openapi({
      description:
        'Runs listed as waiting for a human whose memo does not keep their calls (started before it did, or waiting ' +
        'on over 16 KiB of input) and that did not answer in time (no worker serves them, or their workflow task is ' +
        'failing): their calls are not in `approvals`.',
    }),
    hasMore: z.boolean().openapi({
      description: 'True when more runs wait than `limit` let the listing read: their calls are in neither list.',
    }),
  })
  .openapi('PendingApprovals');

const toolSourceSchema = z
  .discriminatedUnion('kind', [
    z.object({ kind: z.literal('worker') }),
    z.object({
      kind: z.literal('mcp'),
      server: z.string().openapi({ description: "The MCP server's name in the worker's configuration." }),
      tool: z.string().openapi({ description: "The tool's own name on that server." }),
    }),
  ])
  .openapi('ToolSource', { description: "The worker's own code, or an MCP server." });

const toolListingSchema = z
  .object({
    name: z.string().openapi({ description: 'The name runs call the tool by.' }),
    description: z.string(),
    source: toolSourceSchema,
    requiresApproval: z.boolean().openapi({ description: 'A call waits for a human before it runs.' }),
    approvalByRule: z.boolean().optional().openapi({
      description: "Each call is asked the tool's approval rule first: one it answers false for runs without a human.",
    }),
    approvers: z
      .array(z.string())
      .optional()
      .openapi({ description: 'The only approvers (API key names) who may decide its calls, when it names them.' }),
    approvalsRequired: z.number().int().optional().openapi({
      description: 'How many different approvers must approve each call, when more than one.',
    }),
    remindApproversBeforeMs: z.number().int().optional().openapi({
      description: "The tool's own reminder: approvers are reminded this long (ms) before a waiting call expires.",
    }),
    patternLengthLimits: z
      .record(z.string(), z.number().int())
      .optional()
      .openapi({
        description:
          'The longest string a run tries each pattern of the input schema that backtracks on, by pattern: a longer ' +
          'one goes back to the model as too long.',
      }),
    patternsTriedByWorker: z
      .array(z.string())
      .optional()
      .openapi({
        description:
          'Patterns of the input schema that backtrack exponentially or could not be judged: runs do not try them, ' +
          'and the worker tries each with a time limit before a human is asked and before the tool runs.',
      }),
    approvalTimeoutMs: z.number().int().optional().openapi({
      description:
        "How long a call waits for a decision (ms), when the tool sets its own limit; a run's can shorten it.",
    }),
    timeoutMs: z.number().int().optional().openapi({ description: 'Per-attempt time limit, when one is set.' }),
    retry: z
      .object({
        maximumAttempts: z.number().int().optional(),
        initialInterval: z.string().optional(),
        backoffCoefficient: z.number().optional(),
        maximumInterval: z.string().optional(),
        retryTimeouts: z.boolean().optional().openapi({
          description: 'false: a call that timed out is not attempted again (other failures still are).',
        }),
      })
      .optional(),
    annotations: z
      .object({
        title: z.string().optional(),
        readOnlyHint: z.boolean().optional(),
        destructiveHint: z.boolean().optional(),
        idempotentHint: z.boolean().optional(),
        openWorldHint: z.boolean().optional(),
      })
      .optional()
      .openapi({ description: "An MCP server's hints about the tool; the server's word, not checked." }),
    inputSchema: z.record(z.string(), z.unknown()).openapi({ description: "The input's JSON Schema." }),
  })
  .openapi('ToolListing');

const leftOutToolSchema = z
  .object({
    name: z.string().openapi({ description: 'The name runs would call it by, had it been offered.' }),
    source: z.string().openapi({ description: "The source that lists it (an MCP server's name)." }),
    tool: z.string().openapi({ description: 'Its name as the source lists it.' }),
    reason: z
      .string()
      .openapi({ description: 'Why no run can call it (its input schema cannot be checked in a run).' }),
  })
  .openapi('LeftOutTool');

export const toolsResponseSchema = z
  .object({
    tools: z.array(toolListingSchema),
    leftOut: z.array(leftOutToolSchema).openapi({
      description: 'Tools a worker’s sources list that it left out, and no worker serves: runs cannot call them.',
    }),
    workers: z.number().int().openapi({ description: 'How many running workers announced the tools.' }),
  })
  .openapi('Tools', {
    description: 'What the workers on the API’s task queue announce, merged: a tool several serve appears once.',
  });

export const problemSchema = z
  .looseObject({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string().openapi({ description: 'Stable error code, e.g. `run_not_found`.' }),
    issues: z.array(z.object({ path: z.string(), message: z.string(), code: z.string() })).optional(),
  })
  .openapi('Problem');
