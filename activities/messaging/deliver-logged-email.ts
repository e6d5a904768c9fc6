import type { Knex } from 'knex';
import { Context } from '@temporalio/activity';
import { SecretTampered } from '../../lib/secrets';
import { componentType } from '../../data/content/component-types';
import { rowAtRevision } from '../../data/content/revisions';
import { activeConfigs, ChannelConfigRow, openPasswords } from '../../data/messaging/channel-configs';
import { secretKeysOf } from '../../lib/secrets';
import { EmailLogRow, markDelivered, markFailed, noteAttemptFailed, noteSendingThrough, startAttempt } from '../../data/messaging/email-logs';
import { batchVariables } from '../../data/messaging/email-batches';
import { renderTemplate, TemplateTexts } from '../../domain/render-template';
import { isPlatformTemplate, PLATFORM_TEMPLATES } from '../../data/messaging/platform-templates';
import { DeliveryFailure } from '../../adapters/messaging/delivery-failure';
import { whenDatabaseIsBack } from '../../data/db-errors';
import { ChannelInOrder, sendThroughChannels } from '../../adapters/messaging/send-message';
import { verpAddress } from '../../adapters/messaging/verp';
import { UnsubscribeGrant, unsubscribeToken } from '../../adapters/messaging/unsubscribe-token';
import { linkKeysOf } from '../../lib/link-keys';
import { MessagingActivitiesConfig } from './deps';
import { integrationLogOf } from '../../data/messaging/integration-log';
import { awaitTurnOn } from '../../data/messaging/channel-pace';

export type LoggedDelivery = 'SUCCESS' | 'FAILED' | 'RETRY';

/** How far ahead a bulk send's message may book its configuration's turn under a rate limit. */
const BULK_BOOK_AHEAD_MS = 2000;

/** The template revision a log row was written for (sends use exactly that published revision), or the platform's own. */
export async function loggedTemplate(
  db: Knex,
  log: Pick<EmailLogRow, 'template_id' | 'template_revision' | 'platform_template'>,
): Promise<TemplateTexts | undefined> {
  if (log.platform_template !== null && log.platform_template !== undefined)
    return isPlatformTemplate(log.platform_template) ? PLATFORM_TEMPLATES[log.platform_template] : undefined;
  return (await rowAtRevision(db, componentType('EMAIL_TEMPLATE')!, log.template_id as string, log.template_revision as number)) as TemplateTexts | undefined;
}

/** What a bulk send loads once for all its rows. */
export interface Preloaded {
  template?: TemplateTexts;
  channels?: ChannelConfigRow[];
  batchVariables?: Record<string, unknown> | null;
}

/** One logged message handed over (and through which configuration), or why not: `permanent` failures end the row FAILED, the others leave it PENDING. */
export type SendOutcome = { delivered: true; rendered: ReturnType<typeof renderTemplate>; channel: string } | { delivered: false; failure: DeliveryFailure };

/** RFC 8058's headers: a link that unsubscribes the recipient from the category with one POST, no sign-in. */
function oneClickUnsubscribe(config: MessagingActivitiesConfig, grant: UnsubscribeGrant): Record<string, string> {
  return {
    'List-Unsubscribe': `<${config.api.publicUrl}/u/${unsubscribeToken(grant, linkKeysOf(config.secrets.key))}>`,
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
  };
}

/** The active email configurations, in order, each opening its passwords when it is tried. */
export function emailChannelsInOrder(config: MessagingActivitiesConfig, rows: ChannelConfigRow[]): ChannelInOrder[] {
  return rows.map((row) => ({ row, passwords: () => openPasswords(row, secretKeysOf(config), 'EMAIL') }));
}

/**
 * Renders the message one email log row stands for (the template's logged revision, the logged variables,
 * the logged locale) and hands it to the active email configurations in order, or to `boundTo` alone (the
 * one a killed attempt was handing it to). Writes to the row only which configuration has it when it moves
 * on: the caller records the outcome, one row at a time or a bulk send's slice at once. Never rejects.
 */
export async function sendLoggedEmail(
  db: Knex,
  config: MessagingActivitiesConfig,
  log: EmailLogRow,
  preloaded: Preloaded = {},
  boundTo: string | null = null,
): Promise<SendOutcome> {
  try {
    const template = preloaded.template ?? (await loggedTemplate(db, log));
    if (!template) throw new DeliveryFailure(`the template revision ${log.template_revision} is gone`, true, undefined, false, true);
    const active = preloaded.channels ?? (await activeConfigs(db, 'EMAIL'));
    // Bound: that configuration alone, while it is still active (one removed since cannot be asked again).
    const bound = boundTo === null ? [] : active.filter((channel) => channel.id === boundTo);
    const channels = bound.length > 0 ? bound : active;
    // What the row names now (the attempt's start wrote the first of the order where it was not bound).
    let handedTo = boundTo ?? active[0]?.id ?? null;
    // A bulk send's variables are stored once with its batch; a single send's (and an older batch's) in the row.
    const variables = log.variables ?? (log.batch_id ? (preloaded.batchVariables ?? (await batchVariables(db, log.batch_id))) : null);
    const rendered = renderTemplate(template, variables ?? {}, log.locale ?? 'en');
    const took = await sendThroughChannels({
      record: integrationLogOf(db),
      config,
      channels: emailChannelsInOrder(config, channels),
      message: {
        channel: 'EMAIL',
        siteId: log.site_id,
        to: log.recipient,
        subject: rendered.subject,
        content: rendered.html,
        // Delivery reports come back to an address that names this row (BOUNCE_DOMAIN set).
        returnPath: config.mail.bounceDomain ? verpAddress(log.id, config.mail.bounceDomain, secretKeysOf(config)) : undefined,
        headers: log.category === 'bulk' ? oneClickUnsubscribe(config, { siteId: log.site_id, address: log.recipient, category: 'bulk' }) : undefined,
      },
      budgetMs: sendBudgetMs(),
      // A bulk send books turns a little ahead only, so that single sends are not queued behind it.
      awaitTurn: awaitTurnOn(db, log.batch_id ? { bookAheadMs: BULK_BOOK_AHEAD_MS } : {}),
      beforeTry: async (next) => {
        if (next.id === handedTo) return;
        await noteSendingThrough(db, log.id, next.id);
        handedTo = next.id;
      },
    });
    return { delivered: true, rendered, channel: took.config_name };
  } catch (error) {
    // A secret that fails its integrity check will fail every attempt: say so at once.
    return {
      delivered: false,
      failure:
        error instanceof DeliveryFailure
          ? error
          : new DeliveryFailure((error as Error).message, error instanceof SecretTampered, undefined, false, error instanceof SecretTampered),
    };
  }
}

/** Records a failed attempt on its row: FAILED for a permanent failure, still PENDING with the reason otherwise (and still `bound` to its configuration). */
export async function recordFailedAttempt(
  db: Knex,
  id: string | number,
  failure: DeliveryFailure,
  bound = false,
): Promise<{ outcome: LoggedDelivery; reason: string; unreachable?: boolean }> {
  if (failure.permanent) await markFailed(db, id, failure.message, failure.technical ? 'technical-failure' : 'permanent-failure');
  else await noteAttemptFailed(db, id, failure.message, bound);
  return { outcome: failure.permanent ? 'FAILED' : 'RETRY', reason: failure.message, unreachable: failure.unreachable };
}

/**
 * How long the record of a message handed over may wait for a database that is away (a restart) rather
 * than fail the attempt, whose retry would mail the recipient a second time: what the attempt has left,
 * less a margin, and two minutes at most.
 */
export function recordWaitMs(): number {
  return Math.min(120000, Math.max(0, attemptLeftMs() - 5000));
}

/** What the current attempt has left before it times out. */
function attemptLeftMs(): number {
  const info = Context.current().info;
  return info.currentAttemptScheduledTimestampMs + info.startToCloseTimeoutMs - Date.now();
}

/**
 * How long a message's channels may take between them, in order: what the attempt has left, less the time
 * its record needs, so that an attempt never times out with a send in flight (its retry would send again).
 */
function sendBudgetMs(): number {
  return Math.max(0, attemptLeftMs() - 15000);
}

/**
 * Delivers the message one email log row stands for, and records it. The row ends SUCCESS, FAILED (a
 * permanent failure), or stays PENDING with the reason (a temporary one: answered RETRY). A row that is
 * already final is not sent again; one to a suppressed address is not sent at all (FAILED, `suppressed`).
 */
export async function deliverLoggedEmail(
  db: Knex,
  config: MessagingActivitiesConfig,
  log: EmailLogRow,
): Promise<{ outcome: LoggedDelivery; reason: string | null; unreachable?: boolean }> {
  const channels = await activeConfigs(db, 'EMAIL');
  const started = await startAttempt(db, log.id, channels[0]?.id ?? null);
  if (started.kind === 'suppressed') return { outcome: 'FAILED', reason: "the address is on the site's suppression list" };
  if (started.kind === 'final') return { outcome: log.status === 'FAILED' ? 'FAILED' : 'SUCCESS', reason: null };
  const sent = await sendLoggedEmail(db, config, log, { channels }, started.boundTo);
  if (!sent.delivered) return recordFailedAttempt(db, log.id, sent.failure, started.boundTo !== null);
  await whenDatabaseIsBack(() => markDelivered(db, log.id, { ...sent.rendered, channel: sent.channel }), { maxMs: recordWaitMs() });
  return { outcome: 'SUCCESS', reason: null };
}
