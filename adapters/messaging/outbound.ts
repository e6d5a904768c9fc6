import dns from 'node:dns';
import net from 'node:net';
import { Agent, fetch, RequestInit as UndiciRequestInit } from 'undici';
import type { OutboundAllowance, OutboundPurpose } from '../../lib/config';
import { DeliveryFailure } from './delivery-failure';

/**
 * The special-purpose ranges of the IANA IPv4 and IPv6 registries: loopback, private, shared, link-local
 * (cloud metadata lives at 169.254.169.254), documentation, benchmarking, multicast, reserved and broadcast.
 * None is a peer on the Internet; reaching one on a user's word is how a request forgery reaches the inside.
 */
const SPECIAL_IPV4: Array<[string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];
const SPECIAL_IPV6: Array<[string, number]> = [
  ['::', 128],
  ['::1', 128],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['3fff::', 20],
  ['5f00::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  // Refused whole, whatever they carry: IPv4-translated (RFC 6145), local-use NAT64 (RFC 8215), whose IPv4
  // address may sit anywhere its operator puts it, and site-local (RFC 3879, deprecated but still routed).
  ['::ffff:0:0:0', 96],
  ['64:ff9b:1::', 48],
  ['fec0::', 10],
];
const SPECIAL = new net.BlockList();
for (const [address, prefix] of SPECIAL_IPV4) SPECIAL.addSubnet(address, prefix, 'ipv4');
for (const [address, prefix] of SPECIAL_IPV6) SPECIAL.addSubnet(address, prefix, 'ipv6');

/** The 16 bytes of an IPv6 address (`::` expanded, a trailing dotted IPv4 included). */
function ipv6Bytes(address: string): number[] {
  let text = address.split('%')[0];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1].split('.').map(Number);
    text = `${text.slice(0, -dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, null];
  const groups = (part: string) => (part ? part.split(':') : []);
  const missing = 8 - groups(head).length - (tail === null ? 0 : groups(tail).length);
  const all = [...groups(head), ...Array<string>(tail === null ? 0 : missing).fill('0'), ...(tail === null ? [] : groups(tail))];
  return all.flatMap((group) => {
    const value = parseInt(group, 16);
    return [value >> 8, value & 0xff];
  });
}

/**
 * The IPv4 address an IPv6 one carries, in the forms that reach an IPv4 host: mapped (::ffff:0:0/96),
 * compatible (::/96), NAT64 (64:ff9b::/96, 64:ff9b:1::/48) and 6to4 (2002::/16). Null for any other.
 */
function embeddedIpv4(address: string): string | null {
  const bytes = ipv6Bytes(address);
  const v4 = (from: number) => bytes.slice(from, from + 4).join('.');
  const zero = (from: number, to: number) => bytes.slice(from, to).every((byte) => byte === 0);
  if (zero(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return v4(12);
  if (zero(0, 12)) return v4(12);
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && (zero(4, 12) || (bytes[4] === 0 && bytes[5] === 1))) return v4(12);
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return v4(2);
  return null;
}

/** Whether an IP address (either family, IPv6 forms of IPv4 included) is in a special-purpose range. */
export function isSpecialPurpose(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return SPECIAL.check(address, 'ipv4');
  if (family !== 6) return true;
  const carried = embeddedIpv4(address);
  if (carried !== null && SPECIAL.check(carried, 'ipv4')) return true;
  return SPECIAL.check(address, 'ipv6');
}

/** Resolves a name to its addresses: the system's resolver unless one is given (the rebinding test's). */
export type HostResolver = (host: string) => Promise<dns.LookupAddress[]>;

const systemResolver: HostResolver = (host) => dns.promises.lookup(host, { all: true });

export interface OutboundPolicy {
  production: boolean;
  /** What the calls made under this policy are for: an allowance opens a host to its own purpose only. */
  purpose: OutboundPurpose;
  /** Peers allowed although they resolve to a forbidden address (OUTBOUND_ALLOW), each for a purpose and a port. */
  allow: OutboundAllowance[];
  resolve?: HostResolver;
}

export const outboundPolicyOf = (
  config: { production: boolean; outboundAllow: OutboundAllowance[] },
  purpose: OutboundPurpose,
  resolve?: HostResolver,
): OutboundPolicy => ({
  production: config.production,
  purpose,
  allow: config.outboundAllow,
  resolve,
});

/** The purpose of a call to a SOAP or REST peer. */
export const peerPurpose = (transport: string): OutboundPurpose => (transport === 'SOAP' ? 'soap' : 'rest');

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443, 'smtp:': 25 };

/** Host and port of a peer URL, the host lower case and an IPv6 one without its brackets. */
function peerOf(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase(), port: parsed.port ? Number(parsed.port) : (DEFAULT_PORTS[parsed.protocol] ?? 0) };
}

/** A DNS name: labels of letters, digits and inner hyphens. */
const HOST_NAME = /^(?=.{1,253}\.?$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

/** A host name or an IP address, and nothing more (no port, path or userinfo). */
export const isHostNameOrAddress = (host: string) => net.isIP(host) !== 0 || HOST_NAME.test(host);

/**
 * The URL the guard checks for an SMTP relay: its host (an IPv6 one in brackets) and port. The host must be
 * a name or an address and nothing more: `relay:1025/` would put a port of its own in the URL, the guard
 * would check that one, and the socket would go to the configured port.
 */
export function smtpRelayUrl(host: string, port: number | null | undefined): string {
  if (!isHostNameOrAddress(host)) throw new OutboundRefused(`the SMTP host "${host.slice(0, 100)}" is not a host name or an IP address`);
  return `smtp://${net.isIP(host) === 6 ? `[${host}]` : host}:${port ?? DEFAULT_PORTS['smtp:']}`;
}

/** Whether OUTBOUND_ALLOW lets this policy's purpose reach this host on this port. */
function isAllowed(policy: OutboundPolicy, host: string, port: number): boolean {
  return policy.allow.some((entry) => entry.purpose === policy.purpose && entry.host === host && entry.port === port);
}

/** A refusal of the outbound guard: final for a send, 400 OUTBOUND_NOT_ALLOWED for a caller waiting on it. */
export class OutboundRefused extends DeliveryFailure {
  constructor(message: string) {
    super(message, true);
    this.name = 'OutboundRefused';
  }
}

const refusal = (policy: OutboundPolicy, host: string, address: string) =>
  new OutboundRefused(
    `${host} resolves to ${address}, a loopback, private, link-local, metadata or other special-purpose address; list it in OUTBOUND_ALLOW as ${policy.purpose}:host:port to allow it for this purpose`,
  );

/**
 * Refuses, in production, a peer URL whose host is or resolves to a special-purpose address, unless the
 * host is allowed: the check on save. The connection itself is checked again by `guardedAgent`, on the
 * address it actually connects to. Development allows them: test peers run on 127.0.0.1.
 */
export async function assertOutboundAllowed(serviceUrl: string, policy: OutboundPolicy): Promise<void> {
  await checkedAddress(serviceUrl, policy);
}

/**
 * The address to connect to for a URL on a user's word: in production its host resolved once and checked
 * (every address it resolves to must be allowed), so a connection made to the answer cannot be rebound to
 * another; the host itself in development or when OUTBOUND_ALLOW lists it. For transports that take no
 * connect-time lookup (SMTP).
 */
export async function checkedAddress(url: string, policy: OutboundPolicy): Promise<string> {
  const { host, port } = peerOf(url);
  if (!policy.production || isAllowed(policy, host, port)) return host;
  const addresses = net.isIP(host) ? [{ address: host }] : await (policy.resolve ?? systemResolver)(host).catch(() => []);
  if (addresses.length === 0) throw new DeliveryFailure(`${host} does not resolve`, true);
  for (const { address } of addresses) if (isSpecialPurpose(address)) throw refusal(policy, host, address);
  return addresses[0].address;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A socket's `lookup` that lets it connect only to addresses the policy allows: the name is resolved once, at
 * connect time, and the address checked is the address connected to (see `guardedAgent`). For clients that
 * take Node's own agents (the S3 client).
 */
export function guardedLookup(policy: OutboundPolicy, allowedHost: string | null): net.LookupFunction {
  const resolve = policy.resolve ?? systemResolver;
  const lookup = (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => {
    const host = hostname.toLowerCase();
    resolve(hostname).then(
      (addresses) => {
        const refused = policy.production && host !== allowedHost ? addresses.find((entry) => isSpecialPurpose(entry.address)) : undefined;
        if (refused) return callback(refusal(policy, host, refused.address) as unknown as NodeJS.ErrnoException, []);
        if (addresses.length === 0) return callback(new DeliveryFailure(`${host} does not resolve`, true) as unknown as NodeJS.ErrnoException, []);
        if (options.all) return callback(null, addresses);
        return callback(null, addresses[0].address, addresses[0].family);
      },
      (error: NodeJS.ErrnoException) =>
        callback(policy.production ? (new DeliveryFailure(`${host} does not resolve`, true) as unknown as NodeJS.ErrnoException) : error, []),
    );
  };
  return lookup as unknown as net.LookupFunction;
}

/** The URL's host when OUTBOUND_ALLOW lets the policy's purpose reach it on the URL's port, else null. */
export function allowedHostOf(url: string, policy: OutboundPolicy): string | null {
  const { host, port } = peerOf(url);
  return isAllowed(policy, host, port) ? host : null;
}

/**
 * An HTTP agent whose sockets connect only to addresses the policy allows: the name is resolved once, at
 * connect time, and the address checked is the address connected to, so a name that changes its answer
 * between a check and the call (DNS rebinding) cannot slip through.
 */
export function guardedAgent(policy: OutboundPolicy, allowedHost: string | null): Agent {
  const resolve = policy.resolve ?? systemResolver;
  const byPolicy = agents.get(resolve) ?? new Map<string, Agent>();
  agents.set(resolve, byPolicy);
  const key = `${policy.production}|${allowedHost ?? ''}`;
  const known = byPolicy.get(key);
  if (known) return known;
  const lookup = guardedLookup(policy, allowedHost);
  const agent = new Agent({ connect: { lookup }, pipelining: 0 });
  byPolicy.set(key, agent);
  return agent;
}

const agents = new WeakMap<HostResolver, Map<string, Agent>>();

/**
 * Fetches on a user's word in production: an address in the URL itself is checked here (no lookup happens
 * for it), a name at connect time by `guardedAgent`, so the name is resolved once, by the connection.
 */
export async function guardedFetch(url: string, init: RequestInit, policy: OutboundPolicy): Promise<Response> {
  const { host, port } = peerOf(url);
  // Redirects are never followed (every caller asks for 'manual' or 'error'), so the URL's own host and port
  // are the only ones this call connects to: the allowance is decided for them here, and the agent used
  // makes an exception for that host only.
  if (init.redirect === 'follow' || init.redirect === undefined) throw new Error('guardedFetch follows no redirects: pass redirect "manual" or "error"');
  const allowed = isAllowed(policy, host, port);
  if (policy.production && net.isIP(host) && !allowed && isSpecialPurpose(host)) throw refusal(policy, host, host);
  try {
    return (await fetch(url, { ...(init as UndiciRequestInit), dispatcher: guardedAgent(policy, allowed ? host : null) })) as unknown as Response;
  } catch (error) {
    // The guard's own refusal arrives wrapped in undici's connect error: it is the reason, and it is final.
    const cause = (error as Error).cause;
    throw cause instanceof DeliveryFailure ? cause : error;
  }
}

/** A peer's answer, read up to `limit` bytes: a peer cannot fill the worker's memory. */
export async function readCapped(body: ReadableStream<Uint8Array> | null, limit: number): Promise<string> {
  if (!body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > limit) throw new DeliveryFailure(`the peer's answer is larger than ${limit} bytes`, true);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
