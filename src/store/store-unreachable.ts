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

/**
 * Whether `error` says the payload store cannot be reached right now, so a later attempt may succeed: nothing listens,
 * no route or name, no answer in time (a `PostgresConnectTimeoutError` included), or a server not accepting
 * connections yet. A store that refused (a bad password, a missing privilege, a payload it lacks) is not unreachable.
 */
export function isPayloadStoreUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  // SQLSTATE class 08 is a connection exception; 57P03, a server that cannot accept connections yet (starting up).
  return typeof code === 'string' && (unreachableCodes.has(code) || code.startsWith('08') || code === '57P03');
}
