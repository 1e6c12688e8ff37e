import { WorkflowNotFoundError, isGrpcServiceError } from '@temporalio/client';
import { missingNamespaceOf } from './temporal-unavailable.js';

/** gRPC status NOT_FOUND: what the server answers for a workflow id it does not know. */
const grpcNotFound = 5;

/**
 * True for the server's "no such workflow", from a workflow handle or from a raw service call. A raw call's NOT_FOUND
 * also says "no such namespace", which is not an answer about the workflow: a janitor taking it for one would mark
 * every open run closed, so that one is false.
 */
export function isWorkflowNotFound(error: unknown): boolean {
  if (error instanceof WorkflowNotFoundError) return true;
  return isGrpcServiceError(error) && Number(error.code) === grpcNotFound && missingNamespaceOf(error) === undefined;
}
