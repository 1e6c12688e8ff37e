import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';

/** Every string and every byte array (read as UTF-8) in a value, joined: what a reader of the raw data could see. */
export function visibleText(value: unknown): string {
  const parts: string[] = [];
  const seen = new Set<unknown>();
  const walk = (item: unknown): void => {
    if (typeof item === 'string') parts.push(item);
    else if (item instanceof Uint8Array) parts.push(Buffer.from(item).toString('utf8'));
    else if (typeof item === 'object' && item !== null && !seen.has(item)) {
      seen.add(item);
      for (const entry of Object.values(item)) walk(entry);
    }
  };
  walk(value);
  return parts.join('\n');
}

/** The run's whole history and its description as a client without any codec fetches them. */
export async function rawRunRecord(plainClient: Client, runId: string): Promise<string> {
  const handle = plainClient.workflow.getHandle(runId);
  const [history, description] = await Promise.all([
    handle.fetchHistory(),
    plainClient.workflowService.describeWorkflowExecution({
      namespace: plainClient.options.namespace,
      execution: { workflowId: runId },
    }),
  ]);
  return `${visibleText(history)}\n${visibleText(description)}`;
}

/** A fresh 32-byte key in base64, as RELAY_E_ENCRYPTION_KEYS takes it. */
export function newKey(): string {
  return randomBytes(32).toString('base64');
}
