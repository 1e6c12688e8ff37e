/**
 * The id a caller chose, from the run id it became (`<tenant>~<id>`, see `scopedRunId`): suites that name their runs
 * up front key their bookkeeping by the run's real id and ask for the chosen part.
 */
export function chosenPart(runId: string): string {
  return runId.slice(runId.lastIndexOf('~') + 1);
}
