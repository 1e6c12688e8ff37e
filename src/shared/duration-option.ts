import { msToNumber } from '@temporalio/common/lib/time.js';
import { RelayError } from './errors.js';
import type { DurationInput } from './run-types.js';

/**
 * A duration option in milliseconds (`'1h'`, or a number of milliseconds), or an `invalid_input` refusal that names
 * the option (`label`) and shows a duration it would take (`example`).
 */
export function durationOptionMs(value: DurationInput, label: string, example: string): number {
  let ms: number;
  try {
    ms = msToNumber(value);
  } catch {
    ms = Number.NaN;
  }
  if (Number.isNaN(ms)) {
    throw new RelayError('invalid_input', `${label} '${String(value)}' is not a duration (as '${example}' or ms)`);
  }
  return ms;
}
