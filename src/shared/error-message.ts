/**
 * Turns anything thrown (by a tool, a guardrail, a parser, a connection) into one readable line: an `Error`'s message,
 * a string as is. An `AggregateError` without a message of its own (a connection to a name with several addresses,
 * each refused) reads as its errors' messages.
 */
export function errorMessage(error: unknown): string {
  if (error instanceof AggregateError && error.message === '' && error.errors.length > 0) {
    return [...new Set(error.errors.map((inner: unknown) => errorMessage(inner)))].join('; ');
  }
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
