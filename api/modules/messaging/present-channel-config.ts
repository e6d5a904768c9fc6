import { ChannelConfigRow } from '../../../data/messaging/channel-configs';
import { timestampsOf } from '../../http/common-schemas';

/** The answer: everything but the passwords, which are only said to exist. */
export function presentConfig(row: ChannelConfigRow) {
  return {
    id: row.id,
    configName: row.config_name,
    transport: row.transport,
    isActive: row.is_active,
    priority: row.priority,
    ...(row.smtp_host !== undefined
      ? {
          smtpHost: row.smtp_host,
          smtpPort: row.smtp_port,
          smtpUsername: row.smtp_username,
          hasSmtpPassword: Boolean(row.smtp_password),
          smtpUseSsl: row.smtp_use_ssl,
          smtpUseTls: row.smtp_use_tls,
          smtpAllowPlain: Boolean(row.smtp_allow_plain),
        }
      : {}),
    serviceUrl: row.service_url,
    sampleRequest: row.sample_request,
    serviceUsername: row.service_username,
    hasServicePassword: Boolean(row.service_password),
    soapMethodName: row.soap_method_name,
    restMethodType: row.rest_method_type,
    ratePerSecond: row.rate_per_second === null || row.rate_per_second === undefined ? null : Number(row.rate_per_second),
    burst: row.burst ?? null,
    ...timestampsOf(row),
  };
}
