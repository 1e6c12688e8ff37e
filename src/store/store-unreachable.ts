/** The kinds of connection failure another attempt may get past: nothing listens, no route, no name, a timeout. */
const unreachableCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
]);

/** What pg says, without a code, of a connection the server ended under a query (a restart, a failover). */
const droppedConnection = 'Connection terminated unexpectedly';

/**
 * Whether `error` says the payload store cannot be reached right now, so a later attempt may succeed: nothing listens,
 * no route or name, no answer in time (a `PostgresConnectTimeoutError` included), a server not accepting connections
 * yet, or one that dropped the connection under a query. Errors it was caused by, and each of an `AggregateError`'s
 * (a name with several addresses, each refused), are looked at too. A store that refused (a bad password, a missing
 * privilege, a payload it lacks) is not unreachable.
 */
export function isPayloadStoreUnreachable(error: unknown, seen = new Set<unknown>()): boolean {
  if (typeof error !== 'object' || error === null || seen.has(error)) return false;
  seen.add(error);
  const { code, message, cause } = error as { code?: unknown; message?: unknown; cause?: unknown };
  // SQLSTATE class 08 is a connection exception; 57P03, a server that cannot accept connections yet (starting up).
  if (typeof code === 'string' && (unreachableCodes.has(code) || code.startsWith('08') || code === '57P03'))
    return true;
  if (message === droppedConnection) return true;
  const linked = error instanceof AggregateError ? [cause, ...(error.errors as unknown[])] : [cause];
  return linked.some((link) => isPayloadStoreUnreachable(link, seen));
}
