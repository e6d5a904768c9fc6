import type { Knex } from 'knex';
import { Context } from '@temporalio/activity';
import { SecretTampered } from '../../lib/secrets';
import { componentType } from '../../data/content/component-types';
import { rowAtRevision } from '../../data/content/revisions';
import { activeConfigs, ChannelConfigRow, openPasswords } from '../../data/messaging/channel-configs';
import { secretKeysOf } from '../../lib/secrets';
import { batchVariables, EmailLogRow, markDelivered, markFailed, noteAttemptFailed, startAttempt } from '../../data/messaging/email-logs';
import { renderTemplate, TemplateTexts } from '../../domain/render-template';
import { isPlatformTemplate, PLATFORM_TEMPLATES } from '../../data/messaging/platform-templates';
import { DeliveryFailure } from '../../adapters/messaging/delivery-failure';
import { whenDatabaseIsBack } from '../../data/db-errors';
import { ChannelInOrder, sendThroughChannels } from '../../adapters/messaging/send-message';
import { MessagingActivitiesConfig } from './deps';
import { integrationLogOf } from '../../data/messaging/integration-log';

export type LoggedDelivery = 'SUCCESS' | 'FAILED' | 'RETRY';

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

/** The active email configurations, in order, each opening its passwords when it is tried. */
export function emailChannelsInOrder(config: MessagingActivitiesConfig, rows: ChannelConfigRow[]): ChannelInOrder[] {
  return rows.map((row) => ({ row, passwords: () => openPasswords(row, secretKeysOf(config), 'EMAIL') }));
}

/**
 * Renders the message one email log row stands for (the template's logged revision, the logged variables,
 * the logged locale) and hands it to the active email configuration. Writes nothing to the row: the caller
 * records the outcome, one row at a time or a bulk send's slice at once. Never rejects.
 */
export async function sendLoggedEmail(db: Knex, config: MessagingActivitiesConfig, log: EmailLogRow, preloaded: Preloaded = {}): Promise<SendOutcome> {
  try {
    const template = preloaded.template ?? (await loggedTemplate(db, log));
    if (!template) throw new DeliveryFailure(`the template revision ${log.template_revision} is gone`, true);
    const channels = preloaded.channels ?? (await activeConfigs(db, 'EMAIL'));
    // A bulk send's variables are stored once with its batch; a single send's (and an older batch's) in the row.
    const variables = log.variables ?? (log.batch_id ? (preloaded.batchVariables ?? (await batchVariables(db, log.batch_id))) : null);
    const rendered = renderTemplate(template, variables ?? {}, log.locale ?? 'en');
    const took = await sendThroughChannels({
      record: integrationLogOf(db),
      config,
      channels: emailChannelsInOrder(config, channels),
      message: { channel: 'EMAIL', siteId: log.site_id, to: log.recipient, subject: rendered.subject, content: rendered.html },
      budgetMs: sendBudgetMs(),
    });
    return { delivered: true, rendered, channel: took.config_name };
  } catch (error) {
    // A secret that fails its integrity check will fail every attempt: say so at once.
    return {
      delivered: false,
      failure: error instanceof DeliveryFailure ? error : new DeliveryFailure((error as Error).message, error instanceof SecretTampered),
    };
  }
}

/** Records a failed attempt on its row: FAILED for a permanent failure, still PENDING with the reason otherwise. */
export async function recordFailedAttempt(
  db: Knex,
  id: string | number,
  failure: DeliveryFailure,
): Promise<{ outcome: LoggedDelivery; reason: string; unreachable?: boolean }> {
  if (failure.permanent) await markFailed(db, id, failure.message);
  else await noteAttemptFailed(db, id, failure.message);
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
 * already final is not sent again.
 */
export async function deliverLoggedEmail(
  db: Knex,
  config: MessagingActivitiesConfig,
  log: EmailLogRow,
): Promise<{ outcome: LoggedDelivery; reason: string | null; unreachable?: boolean }> {
  if (!(await startAttempt(db, log.id))) return { outcome: log.status === 'FAILED' ? 'FAILED' : 'SUCCESS', reason: null };
  const sent = await sendLoggedEmail(db, config, log);
  if (!sent.delivered) return recordFailedAttempt(db, log.id, sent.failure);
  await whenDatabaseIsBack(() => markDelivered(db, log.id, { ...sent.rendered, channel: sent.channel }), { maxMs: recordWaitMs() });
  return { outcome: 'SUCCESS', reason: null };
}
