import { Config } from '../../lib/config';
import type { Channel, ChannelConfigRow } from '../../data/messaging/channel-configs';
import type { IntegrationLogEntry } from '../../data/messaging/integration-log';
import { singleLine } from '../../domain/tokens';
import { callPeer } from './http-peer';
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
}

export type MessagingConfig = Pick<Config, 'mailFrom' | 'production' | 'outboundAllow'>;

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
}): Promise<void> {
  const { row, message } = args;
  const { smtpPassword, servicePassword } = args.passwords;
  const subject = singleLine(message.subject);
  if (row.transport === 'SMTP') {
    // nodemailer takes no connect-time lookup: the relay's name is resolved and checked here, and the socket
    // connects to that checked address, so an SMTP relay named on a user's word cannot be rebound to a
    // loopback, private or metadata address in production.
    const connectTo = await checkedAddress(smtpRelayUrl(row.smtp_host as string, row.smtp_port), outboundPolicyOf(args.config, 'smtp', args.resolve));
    await sendSmtp(row, smtpPassword, { from: args.config.mailFrom, to: message.to, subject, html: message.content }, connectTo);
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
  });
}
