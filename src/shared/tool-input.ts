import type { z } from 'zod';
import { errorMessage } from './error-message.js';
import { nestedDeeperThan } from './nesting-depth.js';

/** One problem with a tool call's input, with the path where it was found (`items[2].price`). */
export interface ToolInputIssue {
  path: string;
  message: string;
  code: string;
}

/** The outcome of checking a tool call's input: the parsed data, or the issues with a readable message. */
export type ToolInputCheck<T = unknown> =
  { success: true; data: T } | { success: false; issues: ToolInputIssue[]; message: string };

/**
 * Reads tool-call arguments the way model providers send them: an object, or a JSON string of one.
 * Malformed JSON is reported as an issue at the root, never thrown.
 */
export function parseToolArguments(raw: unknown): ToolInputCheck {
  if (typeof raw !== 'string') return { success: true, data: raw ?? {} };
  if (raw.trim() === '') return { success: true, data: {} };
  try {
    return { success: true, data: JSON.parse(raw) as unknown };
  } catch (error) {
    const reason = errorMessage(error);
    const issues = [{ path: '', message: `Arguments are not valid JSON (${reason})`, code: 'invalid_json' }];
    return { success: false, issues, message: describeIssues(issues) };
  }
}

/**
 * How deeply a tool call's input may nest objects and arrays (each one a level): far beyond any real tool's input,
 * and far short of where checking it against a recursive schema would exhaust the stack or, against one whose
 * branches Zod merges (`allOf`), outlast a workflow task's time limit, so the task failed again and again.
 */
export const maxToolInputDepth = 128;

/** The failed check of arguments nested more than {@link maxToolInputDepth} levels deep; undefined for any others. */
export function tooDeepCheck(raw: unknown): ToolInputCheck<never> | undefined {
  const parsed = parseToolArguments(raw);
  return parsed.success ? nestedTooDeep(parsed.data, maxToolInputDepth) : undefined;
}

/** The failed check (`input_too_deep`) of parsed arguments nested more than `maxDepth` levels; else undefined. */
function nestedTooDeep(data: unknown, maxDepth: number | undefined): ToolInputCheck<never> | undefined {
  if (maxDepth === undefined || !nestedDeeperThan(data, maxDepth)) return undefined;
  const message = `Input is nested more than ${maxDepth} levels deep`;
  const issues = [{ path: '', message, code: 'input_too_deep' }];
  return { success: false, issues, message: describeIssues(issues) };
}

/** Tool-call arguments as the call gave them (a JSON string read), for a call whose check passed. */
export function argumentsAsGiven(raw: unknown): unknown {
  const parsed = parseToolArguments(raw);
  return parsed.success ? parsed.data : raw;
}

/** Options of {@link checkToolInput}. */
export interface CheckToolInputOptions {
  /**
   * What a throw from inside the check becomes: an issue at the root (`'issue'`: a user's refinement or transform
   * threw), or the throw itself (`'throw'`: the schema is the run's own, so a throw is a fault, not bad input).
   * @default 'issue'
   */
  onInternalError?: 'issue' | 'throw';
  /**
   * Refuses arguments nested more levels deep than this (`input_too_deep`) before the schema is followed
   * ({@link maxToolInputDepth} for a tool's input).
   * @default no bound
   */
  maxDepth?: number;
}

/**
 * Parses raw arguments and checks them against a schema with `safeParse`; by default never throws, not even when a
 * refinement or transform of the schema does (that becomes an issue at the root).
 */
export function checkToolInput<T>(
  schema: z.ZodType<T>,
  raw: unknown,
  options: CheckToolInputOptions = {},
): ToolInputCheck<T> {
  const parsed = parseToolArguments(raw);
  if (!parsed.success) return parsed;
  const tooDeep = nestedTooDeep(parsed.data, options.maxDepth);
  if (tooDeep) return tooDeep;
  try {
    return toInputCheck(schema.safeParse(parsed.data), parsed.data);
  } catch (error) {
    if (options.onInternalError === 'throw') throw error;
    return failedCheck(error);
  }
}

/**
 * Like `checkToolInput`, for schemas with async refinements or transforms (`safeParseAsync`); by default never
 * rejects.
 */
export async function checkToolInputAsync<T>(
  schema: z.ZodType<T>,
  raw: unknown,
  options: CheckToolInputOptions = {},
): Promise<ToolInputCheck<T>> {
  const parsed = parseToolArguments(raw);
  if (!parsed.success) return parsed;
  const tooDeep = nestedTooDeep(parsed.data, options.maxDepth);
  if (tooDeep) return tooDeep;
  try {
    return toInputCheck(await schema.safeParseAsync(parsed.data), parsed.data);
  } catch (error) {
    if (options.onInternalError === 'throw') throw error;
    return failedCheck(error);
  }
}

function toInputCheck<T>(result: z.ZodSafeParseResult<T>, input: unknown): ToolInputCheck<T> {
  if (result.success) return { success: true, data: result.data };
  const issues = result.error.issues.flatMap((issue) => toToolInputIssues(issue, input));
  return { success: false, issues, message: describeIssues(issues) };
}

/** The issue a check that threw becomes: its reason at the root, code `check_failed`. */
export function failedCheck(error: unknown): ToolInputCheck<never> {
  const reason = errorMessage(error);
  const issues = [{ path: '', message: `Input check failed (${reason})`, code: 'check_failed' }];
  return { success: false, issues, message: describeIssues(issues) };
}

/** `Validation failed: Expected number, received string at 'a'; Required at 'b'`. */
export function describeIssues(issues: readonly ToolInputIssue[]): string {
  const parts = issues.map((issue) => (issue.path ? `${issue.message} at '${issue.path}'` : issue.message));
  return `Validation failed: ${parts.join('; ')}`;
}

/** Formats a Zod path the way a JavaScript reader writes it: `items[2].price`, `["odd key"]`. */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (typeof segment === 'string' && /^[A-Za-z_$][\w$]*$/.test(segment)) text += text ? `.${segment}` : segment;
    else text += `[${JSON.stringify(String(segment))}]`;
  }
  return text;
}

/** What a field the schema does not name is told, here and by `undeclaredFields`. */
export const undeclaredFieldMessage = 'Not a field of the schema';

/** One issue, or one a key for keys the schema does not name, each at its key's path (as a form marks a field). */
function toToolInputIssues(issue: z.core.$ZodIssue, input: unknown): ToolInputIssue[] {
  const path = formatIssuePath(issue.path);
  if (issue.code === 'invalid_type') {
    const received = describeType(valueAt(input, issue.path));
    const message = received === 'undefined' ? 'Required' : `Expected ${issue.expected}, received ${received}`;
    return [{ path, message, code: issue.code }];
  }
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({
      path: formatIssuePath([...issue.path, key]),
      message: undeclaredFieldMessage,
      code: issue.code,
    }));
  }
  return [{ path, message: capitalize(issue.message), code: issue.code }];
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const segment of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && Number.isNaN(value)) return 'nan';
  return typeof value;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
