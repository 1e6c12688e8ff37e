import { TemporalCliNotFoundError, TemporalDevServerError } from '../dev/temporal-dev-server.js';
import { isTemporalUnavailable, missingNamespaceOf } from '../client/temporal-unavailable.js';
import { RelayError } from '../shared/errors.js';
// Kept apart so `relay-e --help` can use the codes without loading the Temporal client this file needs.
import { exitCodes } from './exit-codes.js';

export { exitCodes };

/** A failure the CLI reports with its own message and exit code. */
export class CliError extends Error {
  override readonly name = 'CliError';
  readonly exitCode: number;

  constructor(exitCode: number, message: string) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** A bad flag, a missing argument or unreadable JSON. */
export function usageError(message: string): CliError {
  return new CliError(exitCodes.usage, message);
}

/** The exit code for any error a command throws. */
export function toExitCode(error: unknown): number {
  if (error instanceof CliError) return error.exitCode;
  if (RelayError.isInstance(error)) {
    switch (error.code) {
      case 'run_not_found':
        return exitCodes.notFound;
      case 'approval_not_pending':
      case 'approval_input_invalid':
      case 'approver_not_allowed':
      case 'run_already_exists':
      case 'tenant_mismatch':
        return exitCodes.refused;
      case 'invalid_input':
        return exitCodes.usage;
      case 'run_unavailable':
        return exitCodes.unavailable;
      case 'tool_transport_failed':
        // An MCP server a command starts with: one that may answer another time (not started, not reachable) is
        // unavailable; one that refused its credentials, or whose secret is missing, is a set-up problem.
        return isRetryable(error) ? exitCodes.unavailable : exitCodes.usage;
      default:
        return exitCodes.failed;
    }
  }
  // No Temporal CLI to start a server with is a set-up problem to fix here, not a server that cannot be reached.
  if (error instanceof TemporalCliNotFoundError) return exitCodes.usage;
  // A namespace the server lacks is a deployment's, as for dev and serve: the same exit as an unreachable Temporal.
  if (
    error instanceof TemporalDevServerError ||
    isTemporalUnavailable(error) ||
    missingNamespaceOf(error) !== undefined
  ) {
    return exitCodes.unavailable;
  }
  return exitCodes.failed;
}

/** Whether a `RelayError` says another attempt may succeed (`details.retryable`, as MCP transport failures carry). */
function isRetryable(error: RelayError): boolean {
  return error.details?.['retryable'] === true;
}
