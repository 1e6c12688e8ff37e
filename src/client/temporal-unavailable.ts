import { isGrpcServiceError, NamespaceNotFoundError } from '@temporalio/client';

/** The gRPC status codes Relay-E tells apart in Temporal's answers. */
export const grpcStatus = {
  invalidArgument: 3,
  deadlineExceeded: 4,
  notFound: 5,
  permissionDenied: 7,
  unimplemented: 12,
  unavailable: 14,
  unauthenticated: 16,
} as const;

const unavailableStatuses: readonly number[] = [grpcStatus.unavailable, grpcStatus.deadlineExceeded];

/** How many `cause`s deep an error is searched: the SDK wraps a gRPC error once or twice, never more. */
const causeDepth = 5;

/**
 * Whether Temporal could not be reached or could not answer in time: gRPC UNAVAILABLE or DEADLINE_EXCEEDED, or the
 * SDK's failure to connect (grpc-js' wait for a channel, the worker's native `TransportError`), on the error or along
 * its `cause`s (the client wraps gRPC errors in a `ServiceError`). The first gRPC status found decides.
 */
export function isTemporalUnavailable(error: unknown): boolean {
  for (const link of causesOf(error)) {
    if (isGrpcServiceError(link)) return unavailableStatuses.includes(Number(link.code));
    if (link.name === 'TransportError' || link.message === 'Failed to connect before the deadline') return true;
  }
  return false;
}

/**
 * The namespace Temporal says does not exist, when that is what `error` (or one of its `cause`s) says: the client's
 * `NamespaceNotFoundError`, or the server's NOT_FOUND as a call made on the workflow service itself gets it.
 */
export function missingNamespaceOf(error: unknown): string | undefined {
  for (const link of causesOf(error)) {
    if (link instanceof NamespaceNotFoundError) return link.namespace;
    if (isGrpcServiceError(link)) {
      // The client's gRPC errors say it in their details, a worker connection's (Core's) in their message.
      const named = /^Namespace (\S+?)\.? is not found/.exec(link.details || link.message);
      return Number(link.code) === grpcStatus.notFound && named ? named[1] : undefined;
    }
  }
  return undefined;
}

function* causesOf(error: unknown): Generator<Error> {
  let link = error;
  for (let depth = 0; depth < causeDepth && link instanceof Error; depth++) {
    yield link;
    link = link.cause;
  }
}
