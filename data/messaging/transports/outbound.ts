import dns from 'node:dns/promises';
import net from 'node:net';
import { DeliveryFailure } from './delivery-failure';

// Loopback, private, link-local (cloud metadata lives at 169.254.169.254), unique-local and unspecified.
const FORBIDDEN = new net.BlockList();
for (const [address, prefix] of [['127.0.0.0', 8], ['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['169.254.0.0', 16], ['0.0.0.0', 8], ['100.64.0.0', 10]] as const) {
  FORBIDDEN.addSubnet(address, prefix, 'ipv4');
}
for (const [address, prefix] of [['::1', 128], ['fc00::', 7], ['fe80::', 10], ['::', 128]] as const) FORBIDDEN.addSubnet(address, prefix, 'ipv6');

export interface OutboundPolicy {
  production: boolean;
  /** Hosts allowed although they resolve to a forbidden address (OUTBOUND_ALLOW). */
  allow: string[];
}

/**
 * Refuses, in production, a peer URL whose host resolves to a loopback, private, link-local or metadata
 * address, unless the host is allowed. Development allows them: test peers run on 127.0.0.1.
 */
export async function assertOutboundAllowed(serviceUrl: string, policy: OutboundPolicy): Promise<void> {
  if (!policy.production) return;
  const host = new URL(serviceUrl).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (policy.allow.includes(host)) return;
  const addresses = net.isIP(host) ? [{ address: host, family: net.isIP(host) }] : await dns.lookup(host, { all: true }).catch(() => []);
  if (addresses.length === 0) throw new DeliveryFailure(`${host} does not resolve`, true);
  for (const { address, family } of addresses) {
    const mapped = family === 6 && address.startsWith('::ffff:') ? address.slice(7) : address;
    if (FORBIDDEN.check(mapped, net.isIP(mapped) === 6 ? 'ipv6' : 'ipv4')) {
      throw new DeliveryFailure(`${host} resolves to ${address}, a loopback, private, link-local or metadata address; list it in OUTBOUND_ALLOW to allow it`, true);
    }
  }
}
