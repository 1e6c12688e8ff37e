import { redactSecrets } from './resolve-secret-references.js';
import { errorMessage } from '../shared/error-message.js';

/**
 * Replaces secret values with `[secret]` in an error and in every error of its `cause` chain, in place: message,
 * stack and own properties (an `McpError`'s `data`). Loggers print the whole chain (Temporal's formats it with
 * `util.inspect`), and an SDK error kept as `cause` may quote a server's answer that holds the token it refused.
 */
export function hideSecretsInError<T>(error: T, secretValues: readonly string[]): T {
  const seen = new Set<Error>();
  for (let link: unknown = error; link instanceof Error && !seen.has(link); link = link.cause) {
    seen.add(link);
    for (const key of new Set(['message', 'stack', 'cause', ...Object.keys(link)])) {
      if (Object.hasOwn(link, key)) Reflect.set(link, key, redactData(Reflect.get(link, key), secretValues));
    }
  }
  return error;
}

/** A property's value with the secrets hidden; an `Error` is left for the chain walk to reach. */
function redactData(value: unknown, secretValues: readonly string[]): unknown {
  if (value === undefined || value instanceof Error) return value;
  try {
    return redactSecrets(value, secretValues);
  } catch {
    // Not JSON (a cycle, a BigInt): its readable form, hidden, stands in for it.
    return redactSecrets(errorMessage(value), secretValues);
  }
}
