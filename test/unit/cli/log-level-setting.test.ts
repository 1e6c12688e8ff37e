import { describe, expect, it } from 'vitest';
import { spawnRelayE } from '../../helpers/relay-e-process.js';

// The CLI's own process, from source: a setting is read before any connection, so no Temporal is needed. Starting it
// compiles the CLI's modules, which takes seconds on a loaded machine: more than the unit suite's 5 s default.

describe('RELAY_E_LOG_LEVEL in the CLI', () => {
  it('refuses a value that names no level, before the command starts, instead of logging info and above unsaid', async () => {
    const run = spawnRelayE(['runs'], {
      cwd: process.cwd(),
      env: { ...process.env, RELAY_E_LOG_LEVEL: 'verbose', TEMPORAL_ADDRESS: '127.0.0.1:1' },
    });

    expect({ code: await run.exited, stderr: run.stderr() }).toEqual({
      code: 2,
      stderr: "relay-e runs: RELAY_E_LOG_LEVEL 'verbose' is not a level (debug, info, warn, error, silent)\n",
    });
  }, 30_000);
});
