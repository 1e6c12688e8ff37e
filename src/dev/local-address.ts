import { lookup } from 'node:dns/promises';
import { networkInterfaces } from 'node:os';

/** Addresses that mean this machine whatever its interfaces: loopback, and every interface at once. */
const alwaysLocal = new Set(['localhost', '127.0.0.1', '::1', '0.0.0.0', '::']);

/**
 * Whether a server on this machine can listen at `host`: an address of one of its interfaces, loopback, the wildcard,
 * or a name that resolves to one of them. A name that does not resolve is not.
 */
export async function isAddressOfThisMachine(host: string): Promise<boolean> {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (alwaysLocal.has(bare) || bare.startsWith('127.')) return true;
  const own = new Set(
    Object.values(networkInterfaces())
      .flat()
      .map((entry) => entry?.address),
  );
  const resolved = await lookup(bare, { all: true }).catch(() => []);
  return resolved.some(({ address }) => own.has(address) || address.startsWith('127.') || address === '::1');
}
