/** The messaging vocabulary the workflows check their input with. Imports only its own layer. */
import { check, firstProblem, Problem } from './workflow-input';

/**
 * Where a message is (GOV.UK Notify's statuses): written `created`; `sending` once an attempt starts;
 * `delivered` once a relay or peer took it. It ends `permanent-failure` (refused for good, or a hard bounce),
 * `temporary-failure` (every attempt failed for a passing reason, or a soft bounce), `technical-failure`
 * (the platform could not send it: its template gone, a channel's secret unreadable) or `suppressed` (the
 * address is on its site's suppression list: not sent).
 */
export const DELIVERY_STATUSES = ['created', 'sending', 'delivered', 'temporary-failure', 'permanent-failure', 'technical-failure', 'suppressed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** What kind of mail a message is: bulk mail carries one-click unsubscribe; transactional mail never, and is never held back by it. */
export type EmailCategory = 'transactional' | 'bulk';

/** How a message leaves: an SMTP relay, or an organisation's SOAP or REST gateway. */
export type Transport = 'SMTP' | 'SOAP' | 'REST';

/** Where a logged message stands for the platform: waiting or retrying, sent, or given up. */
export type EmailLogStatus = 'PENDING' | 'SUCCESS' | 'FAILED';

/** Why an address is on a site's suppression list. */
export type SuppressionReason = 'hard-bounce' | 'complaint';

/** Why a send's input is refused, or null: a send carries its log row's id (a bigint, as text) and nothing else. */
export const sendEmailInputProblem = (input: unknown): Problem => firstProblem(input, (given) => [check.pattern('logId', given.logId, '^[1-9][0-9]{0,18}$')]);

/** Why a role send's input is refused, or null. */
export const sendEmailToRoleInputProblem = (input: unknown): Problem => firstProblem(input, (given) => [check.uuid('batchId', given.batchId)]);

/** Where a channel's stored password is sent: the peer's origin and user, or the relay's host, port and user. */
export interface PasswordDestination {
  service_url?: string | null;
  service_username?: string | null;
  smtp_host?: string | null;
  smtp_port?: number | null;
  smtp_username?: string | null;
}

const originOf = (url: string | null | undefined): string | null => {
  if (!url) return null;
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
};

/**
 * Which fields of a configuration's update would send the stored passwords somewhere new (another origin,
 * host, port or user), for an update that leaves the passwords out. A password is kept only where it was
 * given for: whoever may edit a configuration must not be able to redirect its password to a host of theirs.
 */
export function passwordDestinationChanges(before: PasswordDestination, after: PasswordDestination): Array<'service' | 'smtp'> {
  const changed: Array<'service' | 'smtp'> = [];
  if (originOf(before.service_url) !== originOf(after.service_url) || (before.service_username ?? null) !== (after.service_username ?? null))
    changed.push('service');
  if (
    (before.smtp_host ?? null) !== (after.smtp_host ?? null) ||
    (before.smtp_port ?? null) !== (after.smtp_port ?? null) ||
    (before.smtp_username ?? null) !== (after.smtp_username ?? null)
  )
    changed.push('smtp');
  return changed;
}

/**
 * What is wrong with a status callback's URL, or null. No user name or password: one would be kept in clear,
 * and no fetch sends one (the signature is the credential). In production only https, as the receiver hears
 * of recipients' addresses.
 */
export function callbackUrlProblem(url: string, production: boolean): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    parsed = new URL('invalid:');
  }
  if (parsed.username !== '' || parsed.password !== '') return 'must not carry a user name or password';
  const schemes = production ? ['https:'] : ['http:', 'https:'];
  return schemes.includes(parsed.protocol) ? null : `must be an ${schemes.join(' or ')} URL`;
}
