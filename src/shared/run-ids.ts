import { RelayError } from './errors.js';

/** What a caller-chosen run id may hold: 1 to 200 letters, digits or `. _ : -`. */
export const chosenRunIdPattern = /^[\w.:-]{1,200}$/;

/**
 * The run id (and Temporal workflow id) of a run whose id its caller chose: `<tenantId>~<chosenId>`. Scoping by
 * tenant means tenant A choosing an id tenant B already uses neither fails nor learns that B's run exists. `~` is
 * in neither a tenant id from an API key nor a chosen id, so the split is unambiguous.
 */
export function scopedRunId(tenantId: string, chosenId: string): string {
  if (!chosenRunIdPattern.test(chosenId)) {
    throw new RelayError(
      'invalid_input',
      `Invalid run id '${chosenId.slice(0, 64)}': expected 1 to 200 letters, digits or . _ : -`,
      {
        details: { runId: chosenId.slice(0, 256) },
      },
    );
  }
  return `${tenantId}~${chosenId}`;
}
