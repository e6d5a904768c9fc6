import { ConfigError, Env, matching, optional, port, text } from './read';

/** The mail the platform sends, its development capture, and the reports that come back. */
export interface MailConfig {
  smtpCapturePort: number;
  captureUiPort: number;
  /** The From of every email sent. */
  from: string;
  /**
   * The domain of every email's envelope sender, `bounces+{logId}@{domain}` (VERP), whose mail reaches the
   * bounce listener; unset: the envelope sender is MAIL_FROM's address and no report names its message.
   */
  bounceDomain: string | null;
  /** Where the API takes delivery and complaint reports by SMTP; null (BOUNCE_SMTP_PORT unset): nowhere. */
  bounceSmtp: { host: string; port: number } | null;
}

/** VERP's domain and the bounce listener: the listener takes reports only for that domain's addresses. */
function bounceSettings(env: Env): Pick<MailConfig, 'bounceDomain' | 'bounceSmtp'> {
  const bounceDomain =
    optional(env, 'BOUNCE_DOMAIN') &&
    matching(env, 'BOUNCE_DOMAIN', '', /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i, 'a domain name');
  if (optional(env, 'BOUNCE_SMTP_PORT') === null) return { bounceDomain, bounceSmtp: null };
  if (!bounceDomain) throw new ConfigError('BOUNCE_DOMAIN', 'is required with BOUNCE_SMTP_PORT (the domain of the addresses reports come to)');
  return { bounceDomain, bounceSmtp: { host: text(env, 'BOUNCE_SMTP_HOST', '127.0.0.1'), port: port(env, 'BOUNCE_SMTP_PORT', 0) } };
}

export function mailConfig(env: Env): MailConfig {
  return {
    smtpCapturePort: port(env, 'SMTP_CAPTURE_PORT', 1025),
    captureUiPort: port(env, 'MAIL_CAPTURE_UI_PORT', 8025),
    from: text(env, 'MAIL_FROM', 'Opsflow <no-reply@opsflow.local>'),
    ...bounceSettings(env),
  };
}
