import { describe, expect, it } from 'vitest';
import { redactSecrets, withoutCutSecret } from '../../../src/security/resolve-secret-references.js';

const stripeKey = 'sk_live_51H8xQ2eZvKYlo2C0aB9cD8eF';

function basic(credentials: string): string {
  return `Basic ${Buffer.from(credentials).toString('base64')}`;
}

describe('redactSecrets', () => {
  it('finds a secret base64-encoded in a Basic header, as the user name and as the password', () => {
    const echoed = {
      asUser: `Authorization: ${basic(`${stripeKey}:`)}`,
      asPassword: `Authorization: ${basic(`acct_1:${stripeKey}`)}`,
      alone: Buffer.from(stripeKey).toString('base64'),
      urlSafe: Buffer.from(`xy${stripeKey}`).toString('base64url'),
    };

    const redacted = redactSecrets(echoed, [stripeKey]);

    for (const [form, text] of Object.entries(redacted)) {
      expect(text, form).toContain('[secret]');
      // What is left around the mark: the user name's own characters, and two that mix a neighbouring byte in.
      const left = text.replace(/^Authorization: Basic /, '').replace('[secret]', '');
      expect(left.length, form).toBeLessThanOrEqual(form === 'asPassword' ? 14 : 6);
    }
    expect(redacted.asUser).toMatch(/^Authorization: Basic \[secret\].{0,6}$/);
  });

  it('leaves the base64 of a short secret alone, where it would match other text by chance', () => {
    const short = 'pin-1234';
    const encoded = Buffer.from(short).toString('base64');

    expect(redactSecrets({ encoded, plain: `pin is ${short}` }, [short])).toEqual({
      encoded,
      plain: 'pin is [secret]',
    });
  });

  it('keeps finding a secret as written and as JSON escapes it', () => {
    const pem = '-----BEGIN KEY-----\nabc"def\n-----END KEY-----';

    expect(redactSecrets({ raw: pem, json: JSON.stringify({ key: pem }) }, [pem])).toEqual({
      raw: '[secret]',
      json: '{"key":"[secret]"}',
    });
  });
});

describe('withoutCutSecret', () => {
  it('drops the start of a base64-encoded secret that a cut left at the end', () => {
    const encoded = Buffer.from(stripeKey).toString('base64');
    const cut = `token=${encoded.slice(0, 20)}`;

    expect(withoutCutSecret(cut, [stripeKey])).toBe('token=');
  });
});
