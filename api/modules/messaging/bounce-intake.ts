import { AppDeps } from '../../deps';
import { secretKeysOf } from '../../../lib/secrets';
import { recordBounce, recordComplaint } from '../../../data/messaging/bounces';
import { readDeliveryReport } from '../../../adapters/messaging/delivery-reports';
import { RunningBounceListener, startBounceListener } from '../../../adapters/messaging/bounce-listener';
import { logIdOfVerp, verpMentions } from '../../../adapters/messaging/verp';
import { withoutLinkSecrets } from '../../../lib/link-secrets';

/** The fixed address a mailbox provider's feedback loop may send complaints to (the report then names the message). */
export const complaintsAddress = (domain: string) => `complaints@${domain}`;

/**
 * With BOUNCE_SMTP_PORT set, the API takes delivery and complaint reports by SMTP: for the envelope senders
 * of its emails (`bounces+{logId}.{tag}@BOUNCE_DOMAIN`, the tag checked) and for `complaints@BOUNCE_DOMAIN`.
 * A report names its message by the address it came to, or else by one of ours it quotes (the original's
 * Return-Path); a hard bounce fails the message and suppresses the address, a soft one fails it, a
 * complaint suppresses the address. Anything else accepted is dropped, and said in the log.
 */
export async function startBounceIntake({ db, config, logger }: Pick<AppDeps, 'db' | 'config' | 'logger'>): Promise<RunningBounceListener | null> {
  if (!config.mail.bounceSmtp || !config.mail.bounceDomain) return null;
  const domain = config.mail.bounceDomain;
  const keys = secretKeysOf(config);
  const messageOf = (address: string) => logIdOfVerp(address, domain, keys);
  return startBounceListener({
    ...config.mail.bounceSmtp,
    accepts: (address) => messageOf(address) !== null || address.toLowerCase() === complaintsAddress(domain).toLowerCase(),
    take: async (message, recipients) => {
      const report = readDeliveryReport(message);
      if (!report) return logger.info({ recipients: recipients.map(withoutLinkSecrets) }, 'delivery reports: a message that is not a report was dropped');
      const logId = [...recipients, ...verpMentions(report.text, domain)].map(messageOf).find((id) => id !== null);
      if (!logId) return logger.warn({ kind: report.kind }, 'delivery reports: a report that names no message of ours was dropped');
      const row =
        report.kind === 'bounce'
          ? await recordBounce(db, { logId, hard: report.hard, detail: report.detail })
          : await recordComplaint(db, { logId, detail: report.detail });
      logger.info({ logId, kind: report.kind, hard: report.kind === 'bounce' ? report.hard : undefined, known: row !== undefined }, 'delivery report recorded');
    },
    onError: (error) => logger.warn({ err: error.message }, 'delivery reports: the listener failed to record a report'),
  });
}
