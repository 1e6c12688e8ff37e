import { isGrpcServiceError } from '@temporalio/client';

/** The messages of a gRPC error, or of the gRPC error the SDK wrapped; empty for anything else. */
export function grpcMessageOf(error: unknown): string {
  const cause = error instanceof Error && error.cause !== undefined ? error.cause : error;
  if (!isGrpcServiceError(error) && !isGrpcServiceError(cause)) return '';
  return `${(error as Error).message} ${(cause as Error).message ?? ''}`;
}
