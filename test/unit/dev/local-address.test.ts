import { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { isAddressOfThisMachine } from '../../../src/dev/local-address.js';

describe('isAddressOfThisMachine', () => {
  const interfaceAddress = Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry !== undefined && entry.family === 'IPv4' && !entry.internal)?.address;

  it.each(['localhost', '127.0.0.1', '127.0.1.1', '::1', '[::1]', '0.0.0.0'])(
    'counts %s as this machine',
    async (host) => {
      expect(await isAddressOfThisMachine(host)).toBe(true);
    },
  );

  it('counts the address of one of its interfaces', async () => {
    if (interfaceAddress === undefined)
      throw new Error('This machine has no IPv4 interface besides loopback to test with');
    expect(await isAddressOfThisMachine(interfaceAddress)).toBe(true);
  });

  it.each([
    ['an address of TEST-NET-3 (RFC 5737), never a machine’s', '203.0.113.9'],
    ['a name that does not resolve', 'temporal.invalid'],
  ])('does not count %s', async (_, host) => {
    expect(await isAddressOfThisMachine(host)).toBe(false);
  });
});
