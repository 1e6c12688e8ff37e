import { RelayError } from './errors.js';

/** The longest tenant id an API key may name. */
export const maxTenantIdLength = 128;

/**
 * What a tenant id may hold: 1 to {@link maxTenantIdLength} characters of a quote-free alphabet, since tenant ids end
 * up in visibility queries (which have no bind parameters) and approver names.
 */
export const tenantIdPattern = new RegExp(`^[\\w.:@-]{1,${maxTenantIdLength}}$`);

/** The longest run id a caller may choose. */
const maxChosenRunIdLength = 200;

/** The longest run id a run can get: a chosen id scoped by the longest tenant id (see {@link scopedRunId}). */
export const maxRunIdLength = maxTenantIdLength + '~'.length + maxChosenRunIdLength;

/** What a caller-chosen run id may hold: 1 to 200 letters, digits or `. _ : -`. */
export const chosenRunIdPattern = new RegExp(`^[\\w.:-]{1,${maxChosenRunIdLength}}$`);

/** What a refused chosen run id is told it should be. */
export const chosenRunIdRule = `1 to ${maxChosenRunIdLength} letters, digits or . _ : -`;

/**
 * The run id (and Temporal workflow id) of a run whose id its caller chose: `<tenantId>~<chosenId>`. Scoping by
 * tenant means tenant A choosing an id tenant B already uses neither fails nor learns that B's run exists. `~` is
 * in neither a tenant id from an API key nor a chosen id, so the split is unambiguous.
 */
export function scopedRunId(tenantId: string, chosenId: string): string {
  if (!chosenRunIdPattern.test(chosenId)) {
    throw new RelayError('invalid_input', `Invalid run id '${chosenId.slice(0, 64)}': expected ${chosenRunIdRule}`, {
      details: { runId: chosenId.slice(0, 256) },
    });
  }
  return `${tenantId}~${chosenId}`;
}
