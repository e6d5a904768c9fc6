import { Config } from '../../lib/config';
import type { Channel, ChannelConfigRow } from '../../data/messaging/channel-configs';
import type { IntegrationLogEntry } from '../../data/messaging/integration-log';
import { singleLine } from '../../domain/tokens';
import { callPeer } from './http-peer';
import { DeliveryFailure } from './delivery-failure';
import { checkedAddress, HostResolver, outboundPolicyOf, peerPurpose, smtpRelayUrl } from './outbound';
import { sendSmtp } from './smtp';

export interface OutgoingMessage {
  channel: Channel;
  siteId: string;
  to: string;
  /** Email only. */
  subject: string;
  /** The email's HTML, or the SMS text. */
  content: string;
  /** Email over SMTP: the envelope sender, where delivery reports go (the From's address when unset). */
  returnPath?: string;
  /** Email over SMTP: headers of the message's own (List-Unsubscribe), beside those the transport writes. */
  headers?: Record<string, string>;
}

export type MessagingConfig = Pick<Config, 'mail' | 'production' | 'outboundAllow' | 'api'>;

/**
 * Sends one message through a channel configuration, whatever its transport, with the configuration's
 * passwords as opened for it (data/messaging/channel-configs.ts, openPasswords); throws a DeliveryFailure.
 */
export async function sendThroughConfig(args: {
  record: (entry: IntegrationLogEntry) => Promise<void>;
  config: MessagingConfig;
  row: ChannelConfigRow;
  passwords: { smtpPassword: string | null; servicePassword: string | null };
  message: OutgoingMessage;
  resolve?: HostResolver;
  /** How long the relay or peer has to take the message (each transport has its own ceiling). */
  deadlineMs?: number;
}): Promise<void> {
  const { row, message } = args;
  const { smtpPassword, servicePassword } = args.passwords;
  const subject = singleLine(message.subject);
  if (row.transport === 'SMTP') {
    // nodemailer takes no connect-time lookup: the relay's name is resolved and checked here, and the socket
    // connects to that checked address, so an SMTP relay named on a user's word cannot be rebound to a
    // loopback, private or metadata address in production.
    const connectTo = await checkedAddress(smtpRelayUrl(row.smtp_host as string, row.smtp_port), outboundPolicyOf(args.config, 'smtp', args.resolve));
    await sendSmtp(
      row,
      smtpPassword,
      { from: args.config.mail.from, to: message.to, subject, html: message.content, returnPath: message.returnPath, headers: message.headers },
      connectTo,
      args.deadlineMs,
    );
    return;
  }
  const tokens: Record<string, string> =
    message.channel === 'EMAIL'
      ? { emailto: message.to, emailsubject: subject, emailcontent: message.content }
      : { phoneto: message.to, messagecontent: message.content };
  await callPeer({
    record: args.record,
    config: row,
    password: servicePassword,
    tokens,
    siteId: message.siteId,
    component: `${message.channel.toLowerCase()}:${row.config_name}`,
    outbound: outboundPolicyOf(args.config, peerPurpose(row.transport), args.resolve),
    timeoutMs: args.deadlineMs,
  });
}

/** One active configuration, with its passwords opened only when it is tried (a tampered one throws then). */
export interface ChannelInOrder {
  row: ChannelConfigRow;
  passwords: () => { smtpPassword: string | null; servicePassword: string | null };
}

/** The least a channel is given to take a message, however little time the caller has left. */
const LEAST_CHANNEL_MS = 5000;
/**
 * The longest a message waits for its turn under a rate limit when the caller gives no budget: a direct send,
 * whose caller waits on the answer; a configuration whose turn is further off is passed over.
 */
const LONGEST_TURN_WAIT_MS = 1000;

/**
 * Sends one message through the first of the channel's active configurations that takes it, in their
 * order, and answers that configuration. A transient failure (no connection, a timeout, an SMTP 4xx, a
 * peer's 5xx), or a configuration that cannot be used (a password that fails its integrity check, an
 * address the outbound guard refuses, a relay that refuses its login or the sender), moves on to the next;
 * a permanent refusal of the message itself (an SMTP 5xx to the recipient or the message, a peer's 4xx or
 * Fault) does not: another provider would refuse it too. With `budgetMs`, the configurations share that
 * time, and none is tried once too little of it is left, so that trying them fits the caller's attempt.
 *
 * When every configuration tried failed: one configuration's own error as it was thrown; for several, a
 * DeliveryFailure naming each one's reason, temporary unless each was a permanent refusal (unreachable
 * when none could be reached).
 */
export async function sendThroughChannels(args: {
  record: (entry: IntegrationLogEntry) => Promise<void>;
  config: MessagingConfig;
  channels: readonly ChannelInOrder[];
  message: OutgoingMessage;
  resolve?: HostResolver;
  budgetMs?: number;
  /** Before the message is handed to a configuration: the caller records which one may have it. */
  beforeTry?: (next: ChannelConfigRow) => Promise<void>;
  /**
   * Waits for the configuration's turn under its rate limit, if it has one, for `maxWaitMs` at most:
   * false when its turn is further off (that configuration is then passed over, as if it were busy).
   */
  awaitTurn?: (next: ChannelConfigRow, maxWaitMs: number) => Promise<boolean>;
}): Promise<ChannelConfigRow> {
  if (args.channels.length === 0) throw new DeliveryFailure(`no active ${args.message.channel.toLowerCase()} configuration (NO_ACTIVE_CONFIG)`, false);
  const endsAt = args.budgetMs === undefined ? undefined : Date.now() + args.budgetMs;
  const failed: Array<{ name: string; error: unknown }> = [];
  for (const [index, channel] of args.channels.entries()) {
    if (index > 0 && endsAt !== undefined && endsAt - Date.now() < LEAST_CHANNEL_MS) break;
    if (args.awaitTurn) {
      const turnWithinMs = endsAt === undefined ? LONGEST_TURN_WAIT_MS : Math.max(0, endsAt - Date.now() - LEAST_CHANNEL_MS);
      if (!(await args.awaitTurn(channel.row, turnWithinMs))) {
        failed.push({ name: channel.row.config_name, error: new DeliveryFailure('its rate limit gives it no turn within the time left', false) });
        continue;
      }
    }
    const leftMs = endsAt === undefined ? undefined : endsAt - Date.now();
    const deadlineMs = leftMs === undefined ? undefined : Math.max(LEAST_CHANNEL_MS, Math.floor(leftMs / (args.channels.length - index)));
    // Outside the try: a record that fails stops the message here, before it reaches a configuration unrecorded.
    await args.beforeTry?.(channel.row);
    try {
      await sendThroughConfig({ ...args, row: channel.row, passwords: channel.passwords(), deadlineMs });
      return channel.row;
    } catch (error) {
      if (error instanceof DeliveryFailure && error.permanent && !error.ofConfiguration) throw error;
      failed.push({ name: channel.row.config_name, error });
    }
  }
  if (failed.length === 1 || failed.every(({ error }) => !(error instanceof DeliveryFailure))) throw failed[0].error;
  const failures = failed.map(({ error }) => error);
  throw new DeliveryFailure(
    failed.map(({ name, error }) => `${name}: ${(error as Error).message}`).join('; '),
    failures.every((error) => error instanceof DeliveryFailure && error.permanent),
    undefined,
    failures.every((error) => error instanceof DeliveryFailure && error.unreachable),
  );
}
