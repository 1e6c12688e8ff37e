import { describe, expect, it } from 'vitest';
import { toExitCode, usageError } from '../../../src/cli/cli-error.js';
import { exitCodes } from '../../../src/cli/exit-codes.js';
import { RelayError } from '../../../src/shared/errors.js';

describe('exit codes', () => {
  it('exits 4 for every refused decision, an approver the tool does not name included', () => {
    for (const code of ['approval_not_pending', 'approval_input_invalid', 'approver_not_allowed'] as const) {
      expect(toExitCode(new RelayError(code, 'refused'))).toBe(exitCodes.refused);
    }
    expect(exitCodes.refused).toBe(4);
  });

  it('exits 5 for an MCP server that could not be reached, 2 for one whose secret or credentials are wrong', () => {
    const unreachable = new RelayError('tool_transport_failed', "MCP server 'fs' could not be reached", {
      details: { retryable: true },
    });
    const refused = new RelayError('tool_transport_failed', "MCP server 'github' needs secret 'TOKEN'", {
      details: { retryable: false },
    });
    expect(toExitCode(unreachable)).toBe(exitCodes.unavailable);
    expect(toExitCode(refused)).toBe(exitCodes.usage);
  });

  it('keeps not found, usage and unexpected errors apart', () => {
    expect(toExitCode(new RelayError('run_not_found', 'gone'))).toBe(exitCodes.notFound);
    expect(toExitCode(usageError('bad flag'))).toBe(exitCodes.usage);
    expect(toExitCode(new Error('boom'))).toBe(exitCodes.failed);
  });
});
