import type { JsonSchema } from './tool-catalog.js';
import { formatIssuePath, undeclaredFieldMessage } from './tool-input.js';
import type { ToolInputIssue } from './tool-input.js';
import { isRecord } from './is-record.js';

/**
 * The fields of `input` that its JSON Schema does not name, where the schema lists an object's `properties` and says
 * nothing of others (no `additionalProperties`, no `patternProperties`): JSON Schema lets such a field through, but a
 * `defineTool` tool's Zod schema drops it before the tool runs, so an approver who adds `dry_run: true` would see it
 * approved and never applied (a `defineJsonSchemaTool` tool or an MCP server would get it: edits stay within the
 * schema either way). Nested objects and array items are followed where the schema names them; composed
 * schemas (`anyOf`, `$ref`, …) are not looked into. Pure, so the workflow can call it.
 */
export function undeclaredFields(schema: JsonSchema, input: unknown): ToolInputIssue[] {
  const issues: ToolInputIssue[] = [];
  collect(schema, input, [], issues);
  return issues;
}

function collect(schema: unknown, input: unknown, path: PropertyKey[], issues: ToolInputIssue[]): void {
  if (!isRecord(schema)) return;
  if (Array.isArray(input)) {
    if (isRecord(schema['items']))
      input.forEach((item, index) => collect(schema['items'], item, [...path, index], issues));
    return;
  }
  const properties = schema['properties'];
  if (!isRecord(input) || !isRecord(properties)) return;
  const closed = schema['additionalProperties'] === undefined && schema['patternProperties'] === undefined;
  for (const [key, value] of Object.entries(input)) {
    if (Object.hasOwn(properties, key)) collect(properties[key], value, [...path, key], issues);
    else if (closed) {
      issues.push({
        path: formatIssuePath([...path, key]),
        message: undeclaredFieldMessage,
        code: 'unrecognized_keys',
      });
    }
  }
}
