import { summarize } from './stats.js';
import type { Summary } from './stats.js';

/** A throughput file's table: each variant's figures by concurrency, with each round's runs/s in round order. */
export type ThroughputTable = Record<string, Record<string, { runsPerSecondByRound?: number[] }>>;

/**
 * Each round's ratio of two variants' runs/s, summarized by concurrency (the median of the rounds' ratios with
 * min–max). A round's lanes run minutes apart at most, so this follows the machine's drift between rounds, which a
 * ratio of the two medians does not. Empty for a pair the table lacks, or a file without rounds.
 */
export function roundRatios(table: ThroughputTable, numerator: string, denominator: string): Record<string, Summary> {
  const ratios: Record<string, Summary> = {};
  for (const [level, figures] of Object.entries(table[numerator] ?? {})) {
    const over = figures.runsPerSecondByRound;
    const under = table[denominator]?.[level]?.runsPerSecondByRound;
    if (!over || !under || over.length !== under.length) continue;
    ratios[level] = summarize(over.map((value, round) => value / (under[round] ?? Number.NaN)));
  }
  return ratios;
}

/** Every variant's round ratios to the floor, and Relay-E's to the peer, as `numerator/denominator`. */
export function floorAndPeerRatios(table: ThroughputTable): Record<string, Record<string, Summary>> {
  const pairs = Object.keys(table)
    .filter((name) => name !== 'bare-temporal' && name !== 'in-process')
    .map((name) => [name, 'bare-temporal'] as const);
  const all = [...pairs, ['relay', 'peer'] as const];
  return Object.fromEntries(
    all
      .map(([over, under]) => [`${over}/${under}`, roundRatios(table, over, under)] as const)
      .filter(([, ratios]) => Object.keys(ratios).length > 0),
  );
}
