/** Order statistics of a sample, the spread reported beside every median. */
export interface Summary {
  n: number;
  p50: number;
  p99: number;
  min: number;
  max: number;
  mean: number;
}

/** Summarises a sample with nearest-rank percentiles; numbers are rounded to three decimals. */
export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? 0;
  const round = (value: number) => Math.round(value * 1000) / 1000;
  const mean = sorted.reduce((sum, value) => sum + value, 0) / Math.max(1, sorted.length);
  return {
    n: sorted.length,
    p50: round(rank(0.5)),
    p99: round(rank(0.99)),
    min: round(sorted[0] ?? 0),
    max: round(sorted.at(-1) ?? 0),
    mean: round(mean),
  };
}

/** The median of a sample. */
export function median(values: readonly number[]): number {
  return summarize(values).p50;
}
