import { describe, expect, it } from 'vitest';
import { toExitCode } from '../../../src/cli/cli-error.js';
import { apiHost, parseCommandFlags } from '../../../src/cli/command.js';
import { exitCodes } from '../../../src/cli/exit-codes.js';

describe('parseCommandFlags', () => {
  it('refuses an argument a flags-only command would otherwise ignore, naming it and the help', () => {
    const options = { tenant: { type: 'string' } } as const;
    // `relay-e runs acme` listed every tenant's runs: the tenant is a flag, and the argument was dropped.
    const error: unknown = (() => {
      try {
        parseCommandFlags('runs', ['acme'], options);
        return undefined;
      } catch (caught) {
        return caught;
      }
    })();

    expect(toExitCode(error)).toBe(exitCodes.usage);
    expect(String(error)).toMatch(/Unexpected argument 'acme'\. See '.* runs --help'/);
    expect(parseCommandFlags('runs', ['--tenant', 'acme'], options).values.tenant).toBe('acme');
  });
});

describe('apiHost', () => {
  it('binds loopback when RELAY_E_HOST is empty, where Node would bind every interface', () => {
    expect(apiHost(undefined, { RELAY_E_HOST: '' })).toBe('127.0.0.1');
    expect(apiHost(undefined, {})).toBe('127.0.0.1');
    expect(apiHost(undefined, { RELAY_E_HOST: '0.0.0.0' })).toBe('0.0.0.0');
    expect(apiHost('10.0.0.5', { RELAY_E_HOST: '0.0.0.0' })).toBe('10.0.0.5');
  });
});
