import { WorkflowNotFoundError, isGrpcServiceError } from '@temporalio/client';

/** gRPC status NOT_FOUND: what the server answers for a workflow id it does not know. */
const grpcNotFound = 5;

/** True for the server's "no such workflow", from a workflow handle or from a raw service call. */
export function isWorkflowNotFound(error: unknown): boolean {
  return error instanceof WorkflowNotFoundError || (isGrpcServiceError(error) && Number(error.code) === grpcNotFound);
}
