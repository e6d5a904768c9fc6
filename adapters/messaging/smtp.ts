import nodemailer, { Transporter } from 'nodemailer';
import type { ChannelConfigRow } from '../../data/messaging/channel-configs';
import { DeliveryFailure } from './delivery-failure';
import { withoutLinkSecrets } from '../../lib/link-secrets';
import { inSpan } from '../../lib/tracing';

export interface MailMessage {
  from: string;
  to: string;
  subject: string;
  html: string;
  /** The envelope sender (MAIL FROM), where delivery reports go; the From's address when unset. */
  returnPath?: string;
  /** Headers of the message's own; values single-line already. */
  headers?: Record<string, string>;
}

// One pooled transporter per configuration version: a changed configuration gets a new pool.
const pools = new Map<string, Transporter>();

function poolKey(config: ChannelConfigRow, connectTo: string | undefined): string {
  return `${config.id}:${new Date(config.updated_at).getTime()}:${connectTo ?? ''}`;
}

export function smtpTransporter(config: ChannelConfigRow, password: string | null, connectTo?: string): Transporter {
  const key = poolKey(config, connectTo);
  let transporter = pools.get(key);
  if (!transporter) {
    for (const [old, pool] of pools) {
      if (old.startsWith(`${config.id}:`)) {
        pool.close();
        pools.delete(old);
      }
    }
    transporter = nodemailer.createTransport({
      ...serverOptions(config, password, connectTo),
      pool: true,
      maxConnections: 5,
      greetingTimeout: 10000,
      socketTimeout: 30000,
    });
    pools.set(key, transporter);
  }
  return transporter;
}

/**
 * The server, its TLS mode and login, as a configuration gives them; shared by sends and the validate check.
 * `connectTo` is the address the outbound guard checked for the host: the socket goes there, and TLS still
 * verifies the certificate against the configured name.
 */
function serverOptions(config: ChannelConfigRow, password: string | null, connectTo?: string) {
  const name = config.smtp_host ?? undefined;
  return {
    host: connectTo ?? name,
    ...(connectTo && name && connectTo !== name ? { tls: { servername: name } } : {}),
    port: config.smtp_port ?? undefined,
    // TLS from the first byte (smtpUseSsl); STARTTLS required (smtpUseTls, or a login to make: a relay whose
    // STARTTLS an attacker stripped must not get the password); otherwise STARTTLS whenever the server offers
    // it, and a failed upgrade fails the send rather than log in in clear. Plain only when the configuration
    // says so (smtpAllowPlain).
    secure: Boolean(config.smtp_use_ssl),
    requireTLS: Boolean(config.smtp_use_tls) || (Boolean(config.smtp_username) && !config.smtp_allow_plain && !config.smtp_use_ssl),
    ignoreTLS: Boolean(config.smtp_allow_plain) && !config.smtp_use_tls && !config.smtp_use_ssl,
    auth: config.smtp_username ? { user: config.smtp_username, pass: password ?? '' } : undefined,
    connectionTimeout: 10000,
    logger: false,
  };
}

/** nodemailer's codes for a relay it could not connect to at all (its `command` is CONN for those in the connection phase). */
const UNREACHABLE_CODES = new Set(['ECONNECTION', 'EDNS']);
const CONNECTING_CODES = new Set(['ETIMEDOUT', 'ESOCKET']);

/**
 * A 5xx reply refuses the message for good (a rejected address); anything else may pass on a retry. No
 * reply at all (refused, reset, timed out) means the relay is down, not this message.
 */
function failureOf(error: unknown): DeliveryFailure {
  const smtp = error as { responseCode?: number; code?: string; message?: string; command?: string };
  // A relay's refusal often quotes the envelope sender, whose VERP tag must not reach the log row or the worker's logs.
  const reason = withoutLinkSecrets(
    smtp.responseCode ? `SMTP ${smtp.responseCode}: ${smtp.message}` : `SMTP ${smtp.code ?? 'error'}: ${smtp.message ?? String(error)}`,
  );
  const unreachable =
    smtp.responseCode === undefined &&
    (UNREACHABLE_CODES.has(smtp.code ?? '') ||
      (CONNECTING_CODES.has(smtp.code ?? '') && smtp.command === 'CONN') ||
      /ECONNREFUSED|EHOSTUNREACH/.test(smtp.message ?? ''));
  // Refused before the recipient was named (the greeting, the login, the sender): the relay's refusal, not the message's.
  const ofConfiguration = /^(EHLO|HELO|AUTH|MAIL FROM)/i.test(smtp.command ?? '');
  return new DeliveryFailure(reason, smtp.responseCode !== undefined && smtp.responseCode >= 500, undefined, unreachable, false, ofConfiguration);
}

/**
 * How long one send may take at most, under the send activity's one-minute limit: a pooled transporter
 * whose connection broke can leave a send unanswered, and an attempt that ends by timing out is not
 * recorded. A send with channels still to try after it is given less (send-message.ts).
 */
const SEND_DEADLINE_MS = 40000;

export async function sendSmtp(
  config: ChannelConfigRow,
  password: string | null,
  message: MailMessage,
  connectTo?: string,
  deadlineMs = SEND_DEADLINE_MS,
): Promise<void> {
  const transporter = smtpTransporter(config, password, connectTo);
  const waitMs = Math.min(deadlineMs, SEND_DEADLINE_MS);
  let deadline: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    deadline = setTimeout(() => reject(new DeliveryFailure(`SMTP: no answer within ${waitMs / 1000} s`, false, undefined, true)), waitMs);
  });
  try {
    // The subject and recipient were made single-line before; nodemailer gets no chance to be handed a header.
    const { returnPath, ...mail } = message;
    const envelope = returnPath ? { envelope: { from: returnPath, to: [message.to] } } : {};
    const relay = { 'server.address': config.smtp_host ?? '', 'server.port': config.smtp_port ?? 0 };
    await inSpan('smtp send', relay, async (span) => {
      try {
        const sent = await Promise.race([transporter.sendMail({ ...mail, ...envelope, disableFileAccess: true, disableUrlAccess: true }), stalled]);
        span.setAttribute('smtp.response', withoutLinkSecrets(String(sent.response ?? '')));
      } catch (error) {
        // The reason as the send's log row keeps it: without the VERP tag.
        span.setAttribute('smtp.response', error instanceof DeliveryFailure ? error.message : failureOf(error).message);
        throw error;
      }
    });
  } catch (error) {
    if (!(error instanceof DeliveryFailure)) throw failureOf(error);
    // The next attempt gets a new pool rather than the one that stalled.
    transporter.close();
    pools.delete(poolKey(config, connectTo));
    throw error;
  } finally {
    clearTimeout(deadline);
  }
}

export async function verifySmtp(config: ChannelConfigRow, password: string | null, connectTo?: string): Promise<void> {
  const transporter = nodemailer.createTransport(serverOptions(config, password, connectTo));
  try {
    await transporter.verify();
  } catch (error) {
    throw failureOf(error);
  } finally {
    transporter.close();
  }
}
