import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { isAskedToRetryLater, isRefusal } from '../../../src/mcp/mcp-connection.js';

describe("an MCP server's HTTP answer", () => {
  it('takes 401, 403 and 400 as refusals, which the same request would meet again', () => {
    for (const code of [400, 401, 403]) {
      const error = new StreamableHTTPError(code, 'no');
      expect([code, isRefusal(error), isAskedToRetryLater(error)]).toEqual([code, true, false]);
    }
  });

  it('takes 408 and 429 as a request not taken, safe to send again later, not as a refusal', () => {
    // Before, a rate limit failed the run's call for good and dropped the connection the other calls shared.
    for (const code of [408, 429]) {
      const error = new StreamableHTTPError(code, 'later');
      expect([code, isRefusal(error), isAskedToRetryLater(error)]).toEqual([code, false, true]);
    }
  });

  it('takes a 5xx as neither: whether the request was processed is unknown', () => {
    const error = new StreamableHTTPError(502, 'bad gateway');
    expect([isRefusal(error), isAskedToRetryLater(error)]).toEqual([false, false]);
  });
});
