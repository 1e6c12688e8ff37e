/**
 * Round-by-round ratios of a throughput file taken with `runsPerSecondByRound` (bench/lib/round-ratios.ts):
 *
 *   npm run bench:round-ratios -- --in throughput-by-round
 *
 * prints them and writes bench/results/<in>-round-ratios.json; bench/throughput.ts puts the same in its own file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { floorAndPeerRatios } from './lib/round-ratios.js';
import type { ThroughputTable } from './lib/round-ratios.js';

const { values } = parseArgs({ options: { in: { type: 'string' } } });
if (!values.in) throw new Error('Name the throughput file: --in NAME (bench/results/NAME.json)');
const source = JSON.parse(readFileSync(`bench/results/${values.in}.json`, 'utf8')) as { throughput: ThroughputTable };
const roundRatios = floorAndPeerRatios(source.throughput);
if (Object.keys(roundRatios).length === 0) throw new Error(`${values.in}.json has no runsPerSecondByRound to pair`);
for (const [pair, byLevel] of Object.entries(roundRatios)) {
  for (const [level, ratio] of Object.entries(byLevel)) {
    console.log(
      `${pair.padEnd(36)} c=${level.padStart(2)}  ${ratio.p50.toFixed(3)} (min ${ratio.min}, max ${ratio.max})`,
    );
  }
}
const out = `bench/results/${values.in}-round-ratios.json`;
writeFileSync(
  out,
  `${JSON.stringify({ measure: `${values.in}-round-ratios`, from: `${values.in}.json`, roundRatios }, null, 2)}\n`,
);
console.log(`wrote ${out}`);
