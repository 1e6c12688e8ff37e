import { describe, expect, it } from 'vitest';
import { RelayError } from '../../../src/shared/errors.js';

describe('RelayError.hasCode', () => {
  it('recognises a Relay-E error by its code, across copies that instanceof does not see', () => {
    const refusal = new RelayError('run_unavailable', 'not now');
    expect(RelayError.hasCode(refusal, 'run_unavailable')).toBe(true);
    expect(RelayError.hasCode(refusal, 'run_not_found')).toBe(false);
    // What a second copy of the module, or the workflow sandbox, hands over: the marker without the class.
    const copied = Object.assign(new Error('not now'), {
      code: 'run_unavailable',
      [Symbol.for('relay-e.error')]: true,
    });
    expect(copied instanceof RelayError).toBe(false);
    expect(RelayError.hasCode(copied, 'run_unavailable')).toBe(true);
  });

  it('refuses an error of another kind that carries the same code', () => {
    expect(RelayError.hasCode(Object.assign(new Error('x'), { code: 'run_unavailable' }), 'run_unavailable')).toBe(
      false,
    );
    expect(RelayError.hasCode(undefined, 'run_unavailable')).toBe(false);
    expect(RelayError.hasCode('run_unavailable', 'run_unavailable')).toBe(false);
  });
});
