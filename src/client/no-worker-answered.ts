import { isGrpcServiceError } from '@temporalio/client';
import { RelayError } from '../shared/errors.js';

/** gRPC statuses CANCELLED and DEADLINE_EXCEEDED: how a call cut off by its deadline ends. */
const grpcCutOff = new Set([1, 4]);

/** Whether `error` says the run could not answer: `run_unavailable`, or a call cut off by `deadline`. */
export function noWorkerAnsweredIn(error: unknown, deadline: number): boolean {
  if (RelayError.hasCode(error, 'run_unavailable')) return true;
  const cause = error instanceof Error && error.cause !== undefined ? error.cause : error;
  const cutOff = [error, cause].some((each) => isGrpcServiceError(each) && grpcCutOff.has(Number(each.code)));
  return cutOff && Date.now() >= deadline;
}
