import { summarize } from './stats.js';
import type { Summary } from './stats.js';

/** A figure a throughput file keeps round by round, for each variant at each concurrency. */
export type ByRoundFigure = 'runsPerSecondByRound' | 'serverCpuMsPerRunByRound' | 'variantCpuMsPerRunByRound';

/** A throughput file's table: each variant's figures by concurrency, with some of them kept round by round. */
export type ThroughputTable = Record<string, Record<string, Partial<Record<ByRoundFigure, number[]>>>>;

/**
 * Each round's ratio of two variants' figure (runs/s unless named), summarized by concurrency (the median of the
 * rounds' ratios with min–max). A round's lanes run minutes apart at most, so this follows the machine's drift between
 * rounds, which a ratio of the two medians does not. Empty for a pair the table lacks, or a file without rounds.
 */
export function roundRatios(
  table: ThroughputTable,
  numerator: string,
  denominator: string,
  figure: ByRoundFigure = 'runsPerSecondByRound',
): Record<string, Summary> {
  const ratios: Record<string, Summary> = {};
  for (const [level, figures] of Object.entries(table[numerator] ?? {})) {
    const over = figures[figure];
    const under = table[denominator]?.[level]?.[figure];
    if (!over || !under || over.length !== under.length) continue;
    ratios[level] = summarize(over.map((value, round) => value / (under[round] ?? Number.NaN)));
  }
  return ratios;
}

/** Every variant's round ratios to the floor, and Relay-E's to the peer, as `numerator/denominator`. */
export function floorAndPeerRatios(
  table: ThroughputTable,
  figure: ByRoundFigure = 'runsPerSecondByRound',
): Record<string, Record<string, Summary>> {
  const pairs = Object.keys(table)
    .filter((name) => name !== 'bare-temporal' && name !== 'in-process')
    .map((name) => [name, 'bare-temporal'] as const);
  const all = [...pairs, ['relay', 'peer'] as const];
  return Object.fromEntries(
    all
      .map(([over, under]) => [`${over}/${under}`, roundRatios(table, over, under, figure)] as const)
      .filter(([, ratios]) => Object.keys(ratios).length > 0),
  );
}
