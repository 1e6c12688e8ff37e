import { RelayError } from '../shared/errors.js';
import type { PayloadSweepOptions } from './payload-store.js';

/** How long a stored payload outlives the last run that used it, unless a store is given another period: 7 days. */
export const defaultPayloadRetentionMs = 7 * 24 * 60 * 60 * 1000;

/** The checked retention period a store sweeps with by default. */
export function toRetentionMs(retentionMs: number | undefined): number {
  const value = retentionMs ?? defaultPayloadRetentionMs;
  if (!Number.isFinite(value) || value < 0) {
    throw new RelayError('invalid_input', `A payload retention period must be 0 or more milliseconds, not ${value}`);
  }
  return value;
}

/** The moment before which a run's close, or a payload's last put, counts as expired. */
export function sweepCutoff(options: PayloadSweepOptions, storeRetentionMs: number): Date {
  const retentionMs = options.retentionMs === undefined ? storeRetentionMs : toRetentionMs(options.retentionMs);
  return new Date((options.now ?? new Date()).getTime() - retentionMs);
}
