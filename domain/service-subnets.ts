import { stableHash } from './stable-hash';

/**
 * The address blocks of the services' bridge networks. Docker's default pools give each bridge a /16 or a
 * /20, so an engine runs out after about 30 networks, where a platform runs hundreds of services. Each
 * service network is given a block of DEPLOY_SUBNET_POOL instead. Pure.
 */

/**
 * A /26: 61 addresses for containers. A service has at most 20 instances, twice that while a redeploy
 * runs old and new side by side, plus a canary's and the gateway's containers.
 */
export const SERVICE_SUBNET_PREFIX = 26;

interface Range {
  first: number;
  last: number;
}

/** An IPv4 CIDR as the range of addresses it covers, or null when it is not one (IPv6, a typo). */
export function ipv4Range(cidr: string): Range | null {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(cidr.trim());
  if (!match) return null;
  const octets = match.slice(1, 5).map(Number);
  const prefix = Number(match[5]);
  if (octets.some((octet) => octet > 255) || prefix > 32) return null;
  const address = octets.reduce((sum, octet) => sum * 256 + octet, 0);
  const size = 2 ** (32 - prefix);
  const first = address - (address % size);
  return { first, last: first + size - 1 };
}

const dotted = (address: number) => [24, 16, 8, 0].map((shift) => Math.floor(address / 2 ** shift) % 256).join('.');

/**
 * A block of `pool` that overlaps none of the `taken` subnets, or null when none is left. The search starts
 * at a block chosen by `name`, so deploys of different services running at once seldom pick the same one.
 */
export function freeSubnetIn(pool: string, taken: readonly string[], name: string, prefix = SERVICE_SUBNET_PREFIX): string | null {
  const range = ipv4Range(pool);
  if (!range) throw new Error(`${pool} is not an IPv4 CIDR`);
  const size = 2 ** (32 - prefix);
  const blocks = Math.floor((range.last - range.first + 1) / size);
  const used = taken.map(ipv4Range).filter((subnet): subnet is Range => subnet !== null);
  const start = Number(BigInt(`0x${stableHash(name)}`) % BigInt(Math.max(blocks, 1)));
  for (let step = 0; step < blocks; step++) {
    const first = range.first + ((start + step) % blocks) * size;
    const last = first + size - 1;
    if (!used.some((subnet) => subnet.first <= last && first <= subnet.last)) return `${dotted(first)}/${prefix}`;
  }
  return null;
}
