import { z } from 'zod';
import type { JsonSchema } from './tool-catalog.js';

/**
 * Builds the Zod schema a run checks a tool's input with, from the JSON Schema in its catalog. Throws when the
 * JSON Schema cannot be read: the worker refuses such a tool when it is registered, so a run never checks a call
 * against "anything goes". Pure, so the workflow can call it.
 */
export function compileToolSchema(inputSchema: JsonSchema): z.ZodType {
  return z.fromJSONSchema(inputSchema);
}
