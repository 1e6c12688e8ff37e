/** Whether `value` is an object with fields: not `null`, not a list (a raw signal or a parsed body can be anything). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
