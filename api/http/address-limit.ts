import net from 'node:net';
import type { Context } from 'koa';
import type { Config } from '../../lib/config';
import { PlatformError } from '../../lib/errors';

/** Addresses remembered at most: past it the oldest windows are forgotten first, so memory stays bounded. */
const ADDRESSES_KEPT = 50_000;

/**
 * The client's address: the last X-Forwarded-For entry when there is one (the platform's edge removes what
 * the client sent and writes the address it saw), else the connection's. An IPv6 client counts by its /64,
 * the block one subscriber is given, so that walking through its own addresses buys no more tries.
 */
export function clientAddress(ctx: Context): string {
  const forwarded = ctx
    .get('x-forwarded-for')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const last = forwarded[forwarded.length - 1];
  // Only an address counts: a caller on the API's own port (loopback under npm start, unpublished in compose)
  // could otherwise make every request a new key, or fill the table with long ones.
  const named = last !== undefined && net.isIP(last.replace(/^::ffff:/, '')) !== 0 ? last : undefined;
  const address = (named ?? ctx.req.socket.remoteAddress ?? 'unknown').replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
  if (net.isIPv6(address)) {
    const groups = new net.SocketAddress({ address, family: 'ipv6' }).address.split(':');
    return `${expandIpv6(groups).slice(0, 4).join(':')}::/64`;
  }
  return address;
}

function expandIpv6(groups: string[]): string[] {
  const gap = groups.indexOf('');
  if (gap === -1) return groups;
  const head = groups.slice(0, gap).filter(Boolean);
  const tail = groups.slice(gap + 1).filter(Boolean);
  return [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail];
}

/**
 * At most `limit` calls per client address in a window of `windowSeconds` (a fixed window per address),
 * in this API process's memory: behind several API replicas each counts its own. Past the limit: 429
 * RATE_LIMITED, with when the window ends as Retry-After.
 */
export function addressLimit(args: { limit: number; windowSeconds: number; what: string }) {
  const windows = new Map<string, { startedAt: number; count: number }>();
  const windowMs = args.windowSeconds * 1000;
  return (ctx: Context): void => {
    const now = Date.now();
    const address = clientAddress(ctx);
    let window = windows.get(address);
    if (!window || now - window.startedAt >= windowMs) {
      windows.delete(address);
      if (windows.size >= ADDRESSES_KEPT) {
        for (const [known, { startedAt }] of windows) if (now - startedAt >= windowMs) windows.delete(known);
        while (windows.size >= ADDRESSES_KEPT) windows.delete(windows.keys().next().value as string);
      }
      window = { startedAt: now, count: 0 };
      windows.set(address, window);
    }
    window.count++;
    if (window.count > args.limit) {
      const retryAfter = Math.max(1, Math.ceil((window.startedAt + windowMs - now) / 1000));
      throw new PlatformError(
        'RATE_LIMITED',
        `At most ${args.limit} ${args.what} per ${args.windowSeconds} s from one address; try again later.`,
        undefined,
        retryAfter,
      );
    }
  };
}

/**
 * Token-minting sign-ins per client address (SIGN_IN_RATE_LIMIT per SIGN_IN_RATE_WINDOW_SECONDS): the code
 * exchange, which calls the identity provider, and development sign-in. Each route set keeps its own count;
 * the two are never on together (development sign-in is off with an identity provider).
 */
export const signInLimit = (config: Pick<Config, 'limits'>) =>
  addressLimit({ limit: config.limits.signInRateLimit, windowSeconds: config.limits.signInRateWindowSeconds, what: 'sign-ins' });
