import { check, firstProblem, Problem } from './workflow-input';

/**
 * The hostnames a deployed service answers on at the edge, beside its path (`/api/{slug}/…`). The rules
 * here are the API's and the edge's: a name is a DNS name in its ASCII form, held by one service at most,
 * and never the platform's own.
 */

/** At most this many hostnames per service: each is a virtual host of the edge and, later, a certificate. */
export const MAX_DOMAINS_PER_SERVICE = 20;

/** Names the platform answers on itself, whatever PUBLIC_URL says. */
const ALWAYS_THE_PLATFORMS = ['localhost'];

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** A hostname as the platform keeps it: lower case, without the trailing dot of a fully qualified name. */
export const normalHostname = (raw: string): string => raw.trim().toLowerCase().replace(/\.$/, '');

/** Why `hostname` (normal form) is not a name a service may take, or null when it may. */
export function hostnameProblem(hostname: string): string | null {
  if (hostname.length === 0 || hostname.length > 253) return 'a hostname has 1 to 253 characters';
  const labels = hostname.split('.');
  if (labels.length < 2) return 'a hostname has at least two labels, as in shop.example.com';
  if (!labels.every((label) => LABEL.test(label))) {
    return 'each label has 1 to 63 letters, digits or hyphens, not starting or ending with a hyphen (Unicode names in their xn-- form)';
  }
  // A name made of digits and dots is an IPv4 address, which no certificate authority will name.
  if (labels.every((label) => /^[0-9]+$/.test(label))) return 'an address is not a hostname';
  return null;
}

/** The platform's own hostnames: PUBLIC_URL's host and localhost. A service never takes them. */
export function platformHostnames(publicUrl: string): string[] {
  return [...new Set([normalHostname(new URL(publicUrl).hostname), ...ALWAYS_THE_PLATFORMS])];
}

/** Why a certificate run's input is refused, or null: a hostname a certificate may name, and whether it renews. */
export const certificateInputProblem = (input: unknown): Problem =>
  firstProblem(input, (given) => [
    typeof given.hostname === 'string' && hostnameProblem(given.hostname) === null && normalHostname(given.hostname) === given.hostname
      ? null
      : 'hostname is not a hostname in its normal form',
    check.boolean('renewal', given.renewal),
  ]);

/** Why a renewal sweep's input is refused, or null. */
export const renewalInputProblem = (input: unknown): Problem =>
  firstProblem(input, (given) => [
    check.integer('retryAfterSeconds', given.retryAfterSeconds, 1, 7 * 86400),
    check.optional(given.acme, () => check.boolean('acme', given.acme)),
  ]);
