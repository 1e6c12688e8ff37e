import type { z } from 'zod';
import { compileToolSchema } from '../shared/compile-tool-schema.js';
import type { PatternRulesOfRun } from '../shared/compile-tool-schema.js';
import { errorMessage } from '../shared/error-message.js';
import { RelayError } from '../shared/errors.js';
import type { JsonSchema, ToolAnnotations, ToolRetryPolicy, ToolSourceInfo } from '../shared/tool-catalog.js';
import type { ToolGuardrails } from './guardrails.js';
import { patternRules } from './pattern-risks.js';
import { tryPatternsWithTimeLimit } from './timed-patterns.js';
import { toJsonSchema } from './tool-catalog.js';
import type { ToolContext } from './tool-context.js';

/**
 * A tool the model can call: what it is called, what it accepts, and the code that runs it. `Input` is what
 * `execute` receives (the schema's output: defaults and transforms applied), `Output` what it returns.
 */
// `any` by default, as in Zod's own `ZodType`: a list of tools holds tools of every input type.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface ToolDefinition<Input = any, Output = unknown> {
  /** The stable id the model calls: 1 to 64 letters, digits, `_` or `-`. */
  readonly name: string;
  /** Tells the model when to call the tool; it is the model's only documentation. */
  readonly description: string;
  /** Checks the input before `execute`; `.describe()` texts reach the model through the JSON Schema. */
  readonly inputSchema: z.ZodType<Input>;
  /**
   * `true`: a run pauses for a human before `execute`. A function decides call by call (an {@link ApprovalRule}:
   * `(input) => input.amount > 1_000`): it runs on the worker before anyone is asked, and a call it answers `false`
   * for runs without a human.
   * @default false
   */
  readonly requiresApproval?: boolean | ApprovalRule<Input>;
  /**
   * How long a call of this tool waits for a decision, in milliseconds, before it counts as denied: the tool's own
   * limit (a transfer's quote may be good for 15 minutes only). A run that sets `approvalTimeout` can shorten it,
   * never lengthen it.
   * @default the run's `approvalTimeout` (24 hours unless the run says otherwise)
   */
  readonly approvalTimeoutMs?: number;
  /**
   * Who may decide a call of this tool: the approver names a decision must carry, as the HTTP API and the inbox
   * record them (the name of the caller's API key). A decision by anyone else is refused (`approver_not_allowed`)
   * and the call keeps waiting. Names sent through the Temporal client or a signal are the sender's own word.
   * @default any approver of the run's tenant
   */
  readonly approvers?: readonly string[];
  /**
   * How many different approvers must approve a call before it runs: 2 for four-eyes approval. Each approval before
   * the last is recorded (`tool_approval_added`) and the call keeps waiting, with its deadline unchanged; one
   * rejection rejects it. Such a call's approvals must name their approver, the same approver counts once, and its
   * input cannot be edited (it runs the input every approver saw): a decision that breaks one is refused.
   * @default 1
   */
  readonly approvalsRequired?: number;
  /**
   * How long before a call's wait expires its approvers are reminded, in milliseconds: the tool's own lead time in
   * place of the worker's `remindApproversBeforeExpiry` (a quote good for 15 minutes wants a reminder 5 minutes before,
   * not an hour). Reminders go through the worker's approval webhook: a worker without one refuses the tool.
   * @default the worker's `remindApproversBeforeExpiry`, else no reminder
   */
  readonly remindApproversBeforeExpiryMs?: number;
  /**
   * Per-attempt time limit in milliseconds; `ctx.signal` aborts when it elapses.
   * @default the executor's `defaultTimeoutMs` (60 000)
   */
  readonly timeoutMs?: number;
  /**
   * How often the run's activity attempts the tool. An approved tool gets one attempt by default, so a worker
   * crash mid-call loses it: make `execute` idempotent on `ctx.idempotencyKey` (check your store before acting)
   * and give it retries that outlast your worker restarts, e.g. `{ maximumAttempts: 30, maximumInterval: '2s' }`
   * (test/reliability/ledger-worker.ts shows the pattern).
   */
  readonly retry?: ToolRetryPolicy;
  /**
   * Checks that run around this tool's `execute`, after the executor's own. Written after `execute` in the
   * options, `after` sees the output type TypeScript inferred from it.
   */
  readonly guardrails?: ToolGuardrails<Input, NoInfer<Output>>;
  /**
   * Output whose JSON is larger than this is cut to fit.
   * @default the executor's `maxResultBytes` (32 768)
   */
  readonly maxResultBytes?: number;
  /**
   * The JSON Schema the model is shown, when the tool was defined by one (`defineJsonSchemaTool`, MCP servers);
   * `inputSchema` is then the Zod schema built from it, as the workflow builds it.
   */
  readonly inputJsonSchema?: JsonSchema;
  /** Where the tool comes from; absent for a worker's own tools. */
  readonly source?: ToolSourceInfo;
  /** Behaviour hints shown to the approver (`destructiveHint`) and used for default policies. */
  readonly annotations?: ToolAnnotations;
  /** Receives the parsed input (defaults and transforms applied); a throw becomes an `execution` failure. */
  readonly execute: (input: Input, ctx: ToolContext) => Output | Promise<Output>;
}

/** Who is asking, for an {@link ApprovalRule}: the run and the call it decides for. */
export interface ApprovalRuleContext {
  tenantId: string;
  userId?: string;
  sessionId?: string;
  runId: string;
  toolCallId: string;
}

/**
 * Whether one call of a tool needs a human, from its parsed input (defaults and transforms applied) and who asks.
 * It runs in an activity on the worker after the input passed the tool's schema, and its answer is recorded in the
 * run's history, so replays and redeploys keep it. Keep it quick and free of effects. A rule that throws, or answers
 * anything but `false`, asks a human: only a plain `false` lets a call run unapproved.
 */
export type ApprovalRule<Input> = (input: Input, context: ApprovalRuleContext) => boolean | Promise<boolean>;

/** What `defineTool` takes: a tool definition. */
export type DefineToolOptions<Input, Output> = ToolDefinition<Input, Output>;

/** What `defineJsonSchemaTool` takes: `defineTool`'s options with a JSON Schema object as the input schema. */
export interface DefineJsonSchemaToolOptions<TOutput> extends Omit<
  DefineToolOptions<unknown, TOutput>,
  'inputSchema' | 'inputJsonSchema'
> {
  readonly inputSchema: JsonSchema;
}

/** What `tool` takes: `defineTool`'s options with the schema under `input`. */
export interface ToolOptions<Input, Output> extends Omit<ToolDefinition<Input, Output>, 'inputSchema'> {
  readonly input: z.ZodType<Input>;
}

const toolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Checks a tool's options and returns its frozen definition; a bad name, a missing description or an input
 * schema that JSON Schema cannot express throws `RelayError('invalid_tool_definition')` here, not mid-run.
 */
export function defineTool<Input, Output>(
  options: DefineToolOptions<Input, Output>,
): ToolDefinition<Input, Output> & { readonly requiresApproval: boolean | ApprovalRule<Input> } {
  const { name, description, inputSchema, execute, requiresApproval = false } = options;
  if (typeof name !== 'string' || !toolNamePattern.test(name)) {
    invalid(name, `Tool name ${JSON.stringify(name)} must be 1 to 64 letters, digits, '_' or '-'`);
  }
  if (typeof description !== 'string' || description.trim() === '') {
    invalid(name, `Tool '${name}' needs a description: it is all the model knows about the tool`);
  }
  if (typeof (inputSchema as Partial<z.ZodType> | undefined)?.safeParseAsync !== 'function') {
    invalid(name, `Tool '${name}' needs a Zod schema as its input schema`);
  }
  if (typeof execute !== 'function') invalid(name, `Tool '${name}' needs an execute function`);
  checkToolPolicy(options, (message) => invalid(name, `Tool '${name}': ${message}`));
  if (options.inputJsonSchema === undefined) toJsonSchema(inputSchema, name);

  const definition: ToolDefinition<Input, Output> & { requiresApproval: boolean | ApprovalRule<Input> } = {
    name,
    description,
    inputSchema,
    requiresApproval,
    execute,
  };
  const optional = {
    approvalTimeoutMs: options.approvalTimeoutMs,
    approvers: options.approvers === undefined ? undefined : [...options.approvers],
    approvalsRequired: options.approvalsRequired,
    remindApproversBeforeExpiryMs: options.remindApproversBeforeExpiryMs,
    timeoutMs: options.timeoutMs,
    retry: options.retry,
    guardrails: options.guardrails,
    maxResultBytes: options.maxResultBytes,
    inputJsonSchema: options.inputJsonSchema,
    source: options.source,
    annotations: options.annotations,
  };
  for (const [key, value] of Object.entries(optional)) {
    if (value !== undefined) Object.assign(definition, { [key]: value });
  }
  return Object.freeze(definition);
}

/** The short form of `defineTool`: the same definition, with the schema given as `input`. */
export function tool<Input, Output>(
  options: ToolOptions<Input, Output>,
): ToolDefinition<Input, Output> & { readonly requiresApproval: boolean | ApprovalRule<Input> } {
  const { input, ...rest } = options;
  return defineTool({ ...rest, inputSchema: input });
}

/**
 * Defines a tool whose input is described by a JSON Schema instead of Zod (a tool from another system, an MCP
 * server's tool). The executor checks input with the Zod schema the workflow builds from the run's catalog
 * (compileToolSchema: `z.fromJSONSchema`, its patterns read in Unicode mode where they need it, and tried only on
 * strings as long as a run tries them on: pattern-risks.ts); a schema it cannot read, or with a pattern a run cannot
 * try safely, throws `RelayError('invalid_tool_definition')`.
 */
export function defineJsonSchemaTool<TOutput>(
  options: DefineJsonSchemaToolOptions<TOutput>,
): ToolDefinition<unknown, TOutput> {
  const { inputSchema, ...rest } = options;
  if (typeof inputSchema !== 'object' || inputSchema === null || Array.isArray(inputSchema)) {
    invalid(rest.name, `Tool '${rest.name}' needs a JSON Schema object as its input schema`);
  }
  let rules: PatternRulesOfRun = {};
  try {
    rules = patternRules(inputSchema, { workerTries: true });
  } catch (error) {
    invalid(
      rest.name,
      `The input JSON Schema of tool '${rest.name}' cannot be checked in a run: ${errorMessage(error)}`,
    );
  }
  let schema: z.ZodType<unknown>;
  try {
    schema = ownCheck(inputSchema, rules);
  } catch (error) {
    invalid(rest.name, `The input JSON Schema of tool '${rest.name}' cannot be read (${errorMessage(error)})`);
  }
  return defineTool({ ...rest, inputSchema: schema, inputJsonSchema: inputSchema });
}

/**
 * The tool's own check of its input: its JSON Schema compiled as a run compiles it, with the patterns a run leaves to
 * the worker tried here, each with a time limit, instead of skipped.
 */
function ownCheck(inputSchema: JsonSchema, rules: PatternRulesOfRun): z.ZodType<unknown> {
  const { patternsTriedByWorker, ...bounds } = rules;
  const schema = compileToolSchema(inputSchema, bounds);
  const timed = new Set(patternsTriedByWorker);
  const reached = tryPatternsWithTimeLimit(schema, timed);
  const unreached = [...timed].filter((source) => !reached.has(source));
  if (unreached.length > 0) throw new Error(`the pattern(s) ${unreached.join(', ')} cannot be tried with a time limit`);
  return schema;
}

/** The options of a tool that say how its calls run and how a human decides them: an MCP server's policy has them. */
export type ToolPolicyOptions = Pick<
  DefineToolOptions<unknown, unknown>,
  | 'timeoutMs'
  | 'approvalTimeoutMs'
  | 'approvers'
  | 'approvalsRequired'
  | 'remindApproversBeforeExpiryMs'
  | 'maxResultBytes'
  | 'retry'
> & { requiresApproval?: unknown };

/**
 * Checks the options that say how a tool's calls run and how a human decides them, for `defineTool` and for an MCP
 * server's policy; `refuse` throws, given what is wrong.
 */
export function checkToolPolicy(options: ToolPolicyOptions, refuse: (message: string) => never): void {
  const { requiresApproval = false } = options;
  if (typeof requiresApproval !== 'boolean' && typeof requiresApproval !== 'function') {
    refuse('requiresApproval must be true, false or a function of the input');
  }
  const positive = (option: string, value: number | undefined) => {
    if (value !== undefined && !(Number.isSafeInteger(value) && value > 0)) {
      refuse(`${option} must be a positive integer, got ${String(value)}`);
    }
  };
  positive('timeoutMs', options.timeoutMs);
  positive('approvalTimeoutMs', options.approvalTimeoutMs);
  checkApprovers(options.approvers, refuse);
  checkApprovalsRequired(options, refuse);
  positive('remindApproversBeforeExpiryMs', options.remindApproversBeforeExpiryMs);
  for (const option of approvalOnlyOptions) {
    if (options[option] !== undefined && requiresApproval === false) {
      refuse(`${option} needs requiresApproval (true or a rule); no call would wait for a human`);
    }
  }
  positive('maxResultBytes', options.maxResultBytes);
  positive('retry.maximumAttempts', options.retry?.maximumAttempts);
}

/**
 * The options that say how a human decides a call: they apply only to a tool that asks for approval, so a tool that
 * never does is refused them (`defineTool`), and an MCP server's policy gives them only to its tools that do.
 */
export const approvalOnlyOptions = ['approvers', 'approvalsRequired', 'remindApproversBeforeExpiryMs'] as const;

/** A list of one or more approver names. */
function checkApprovers(approvers: unknown, refuse: (message: string) => never): void {
  if (approvers === undefined) return;
  const names = Array.isArray(approvers) ? (approvers as unknown[]) : [];
  if (names.length === 0 || !names.every((approver) => typeof approver === 'string' && approver.trim() !== '')) {
    refuse('approvers must be a list of one or more approver names');
  }
}

/** The most approvals a call can ask for: a larger count is a mistake rather than a policy. */
const maxApprovalsRequired = 10;

/**
 * A whole count from 1 to 10, no larger than the tool's list of approvers: a count those could never meet would leave
 * every call waiting until it expires.
 */
function checkApprovalsRequired(
  options: { approvalsRequired?: unknown; approvers?: readonly unknown[] },
  refuse: (message: string) => never,
): void {
  const required = options.approvalsRequired;
  if (required === undefined) return;
  if (typeof required !== 'number' || !Number.isInteger(required) || required < 1 || required > maxApprovalsRequired) {
    refuse(`approvalsRequired must be a whole number from 1 to ${maxApprovalsRequired}`);
  }
  if (options.approvers !== undefined && required > options.approvers.length) {
    refuse(`approvalsRequired (${required}) is more than its ${options.approvers.length} approver(s)`);
  }
}

function invalid(toolName: unknown, message: string): never {
  throw new RelayError('invalid_tool_definition', message, { details: { toolName } });
}
