/** The exit codes of `relay-e`, documented in `relay-e --help`. */
export const exitCodes = {
  ok: 0,
  /** The run failed or was cancelled, or an unexpected error happened. */
  failed: 1,
  usage: 2,
  /** No such run. */
  notFound: 3,
  /**
   * The run refused the decision: no such pending tool call (or one already decided), edited input that fails the
   * tool's schema, or a wrong approver.
   */
  refused: 4,
  /**
   * The Temporal server (or the API port) is not reachable, the dev server did not start, an MCP server could not
   * be started or reached, or the run cannot answer until a worker recovers it.
   */
  unavailable: 5,
  /** Interrupted with Ctrl-C while following a run; the run itself goes on. */
  interrupted: 130,
} as const;
