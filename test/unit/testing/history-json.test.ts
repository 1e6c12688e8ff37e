import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { historyFromJson } from '../../../src/testing/history-json.js';

const histories = path.join(import.meta.dirname, '../../fixtures/histories/agent-run/catalog-in-first-call');

/** `EVENT_TYPE_WORKFLOW_EXECUTION_STARTED` → `WorkflowExecutionStarted`, as tctl and the Web UI exported enums. */
function pascalCase(constant: string, prefix: string): string {
  return constant
    .slice(prefix.length + 1)
    .toLowerCase()
    .replace(/(?:^|_)([a-z])/g, (_match, letter: string) => letter.toUpperCase());
}

type JsonObject = Record<string, unknown>;

/** Rewrites `object[field]` in PascalCase when it holds a constant-case name. */
function rewrite(object: JsonObject, field: string, prefix: string): void {
  const value = object[field];
  if (typeof value === 'string') object[field] = pascalCase(value, prefix);
}

/** The history as an older export writes it: event types, task queue kinds and attributes' enums in PascalCase. */
function inPascalCase(history: { events: JsonObject[] }): { events: JsonObject[] } {
  for (const event of history.events) {
    rewrite(event, 'eventType', 'EVENT_TYPE');
    for (const [field, attributes] of Object.entries(event)) {
      if (!field.endsWith('EventAttributes')) continue;
      const fields = attributes as JsonObject;
      rewrite(fields, 'retryState', 'RETRY_STATE');
      rewrite(fields, 'initiator', 'CONTINUE_AS_NEW_INITIATOR');
      if (fields['taskQueue']) rewrite(fields['taskQueue'] as JsonObject, 'kind', 'TASK_QUEUE_KIND');
    }
  }
  return history;
}

describe('reading a history from JSON', () => {
  it.each(['continue-as-new-last-execution.json', 'model-failed.json'])(
    'reads %s exported with PascalCase enums as it reads the constant-case file',
    async (file) => {
      const text = await readFile(path.join(histories, file), 'utf8');
      const pascal = inPascalCase(JSON.parse(text) as { events: JsonObject[] });
      expect(pascal.events[0]?.['eventType']).toBe('WorkflowExecutionStarted');

      const history = historyFromJson(pascal);
      expect(history.events?.every((event) => event.eventType)).toBe(true);
      expect(history).toEqual(historyFromJson(JSON.parse(text)));
    },
  );
});
