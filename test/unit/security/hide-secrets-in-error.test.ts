import { inspect } from 'node:util';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { hideSecretsInError } from '../../../src/security/hide-secrets-in-error.js';
import { RelayError } from '../../../src/shared/errors.js';

const secret = 'sk-live-TOPSECRET';

describe('hideSecretsInError', () => {
  it('hides a secret everywhere util.inspect looks: messages, stacks, causes and their own properties', () => {
    const quoted = new McpError(-32001, `token ${secret} revoked`, { token: secret });
    const cause = new Error(`upstream said: ${secret}`, { cause: quoted });
    const error = new RelayError('tool_transport_failed', `refused ${secret}`, {
      cause,
      details: { retryable: false },
    });

    expect(hideSecretsInError(error, [secret])).toBe(error);
    expect(inspect(error, { depth: 10 })).not.toContain(secret);
    expect(error).toMatchObject({ message: 'refused [secret]', code: 'tool_transport_failed' });
    expect(error.details).toEqual({ retryable: false });
    expect(quoted.data).toEqual({ token: '[secret]' });
  });

  it('hides a cause that is not an Error, and stops at a cause chain that loops', () => {
    const looping = new Error('first');
    const second = new Error('second', { cause: looping });
    looping.cause = second;
    const withText = new Error('outer', { cause: `raw answer with ${secret}` });

    hideSecretsInError(looping, [secret]);
    hideSecretsInError(withText, [secret]);
    expect(withText.cause).toBe('raw answer with [secret]');
  });
});
