import { ConfigError, Env, optional } from './read';

/**
 * What an outbound call is for: an SMTP relay, a REST or SOAP peer (a channel's or a SOAP component's), the
 * identity provider (its JWKS, and for OIDC sign-in its discovery and token endpoints), a site's status callback,
 * an S3-compatible archive store.
 */
export const OUTBOUND_PURPOSES = ['smtp', 'rest', 'soap', 'jwks', 'callback', 's3'] as const;
export type OutboundPurpose = (typeof OUTBOUND_PURPOSES)[number];

/** One OUTBOUND_ALLOW entry: `purpose:host:port`, an IPv6 host in brackets. */
export interface OutboundAllowance {
  purpose: OutboundPurpose;
  /** Lower case; an IPv6 address without its brackets. */
  host: string;
  port: number;
}

/**
 * OUTBOUND_ALLOW: a host allowed for one purpose on one port only, so that allowing an internal relay does
 * not let an editor's SOAP component reach it, on that port or any other. A bare host is refused, not read
 * as "every purpose": that was the hole.
 */
export function outboundAllowances(env: Env): OutboundAllowance[] {
  const entries = (optional(env, 'OUTBOUND_ALLOW') ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  return entries.map((entry) => {
    const parsed = /^([a-z0-9]+):(\[[0-9a-fA-F:.]+\]|[^:[\]\s]+):([0-9]{1,5})$/.exec(entry);
    const purpose = parsed?.[1] as OutboundPurpose | undefined;
    const portNumber = Number(parsed?.[3]);
    if (!parsed || !OUTBOUND_PURPOSES.includes(purpose!) || portNumber < 1 || portNumber > 65535) {
      throw new ConfigError(
        'OUTBOUND_ALLOW',
        `each entry must be purpose:host:port, the purpose one of ${OUTBOUND_PURPOSES.join(', ')} (e.g. smtp:relay.internal:587, soap:[fd00::7]:8443); got "${entry}"`,
      );
    }
    return { purpose: purpose!, host: parsed[2].replace(/^\[|\]$/g, '').toLowerCase(), port: portNumber };
  });
}
