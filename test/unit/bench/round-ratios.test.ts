import { describe, expect, it } from 'vitest';
import { floorAndPeerRatios, roundRatios } from '../../../bench/lib/round-ratios.js';

describe('round ratios', () => {
  it('divides the two variants round by round, so a slow round of both does not widen the spread', () => {
    const table = {
      relay: { '1': { runsPerSecondByRound: [9, 4.5, 10] } },
      'bare-temporal': { '1': { runsPerSecondByRound: [10, 5, 10] } },
    };

    const ratios = roundRatios(table, 'relay', 'bare-temporal');

    expect(ratios['1']).toMatchObject({ n: 3, p50: 0.9, min: 0.9, max: 1 });
  });

  it('leaves out a concurrency that either side lacks, or whose rounds differ in number', () => {
    const table = {
      relay: { '1': { runsPerSecondByRound: [1, 2] }, '10': { runsPerSecondByRound: [1] }, '50': {} },
      'bare-temporal': { '1': { runsPerSecondByRound: [2, 2] }, '10': { runsPerSecondByRound: [1, 1] } },
    };

    expect(Object.keys(roundRatios(table, 'relay', 'bare-temporal'))).toEqual(['1']);
  });

  it('pairs every variant but the in-process loop with the floor, and Relay-E with the peer', () => {
    const rounds = { '10': { runsPerSecondByRound: [2, 4] } };
    const table = { 'in-process': rounds, 'bare-temporal': rounds, relay: rounds, peer: rounds };

    expect(Object.keys(floorAndPeerRatios(table)).sort()).toEqual([
      'peer/bare-temporal',
      'relay/bare-temporal',
      'relay/peer',
    ]);
  });

  it('divides another figure kept round by round when named, such as the server CPU a run cost', () => {
    const table = {
      relay: { '50': { runsPerSecondByRound: [1, 1], serverCpuMsPerRunByRound: [30, 33] } },
      'bare-temporal': { '50': { runsPerSecondByRound: [2, 2], serverCpuMsPerRunByRound: [20, 30] } },
    };

    expect(roundRatios(table, 'relay', 'bare-temporal', 'serverCpuMsPerRunByRound')['50']).toMatchObject({
      min: 1.1,
      max: 1.5,
    });
    expect(floorAndPeerRatios(table, 'serverCpuMsPerRunByRound')['relay/bare-temporal']?.['50']?.max).toBe(1.5);
  });

  it('has nothing to pair in a file taken before rounds were kept', () => {
    const table = { relay: { '1': {} }, 'bare-temporal': { '1': {} } };

    expect(floorAndPeerRatios(table)).toEqual({});
  });
});
