import { XMLValidator } from 'fast-xml-parser';
import { FieldIssue } from '../../../lib/errors';
import { Channel, ConfigColumns } from '../../../data/messaging/channel-configs';
import { ConfigBody } from './channel-schemas';

// A channel configuration's body: what each transport requires of it, and the columns it is saved as.

/** Each transport's required fields and the sample request's syntax. */
export function transportIssues(channel: Channel, body: ConfigBody): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const need = (field: keyof ConfigBody) => {
    if (body[field] === undefined || body[field] === null || body[field] === '')
      issues.push({ path: `body.${field}`, message: `is required for ${body.transport}` });
  };
  if (body.transport === 'SMTP') {
    need('smtpHost');
    need('smtpPort');
    return issues;
  }
  need('serviceUrl');
  if (body.serviceUrl) {
    let protocol = '';
    try {
      protocol = new URL(body.serviceUrl).protocol;
    } catch {
      // not a URL at all
    }
    if (protocol !== 'http:' && protocol !== 'https:') issues.push({ path: 'body.serviceUrl', message: 'must be an http or https URL' });
  }
  if (body.transport === 'SOAP') {
    need('soapMethodName');
    need('sampleRequest');
    if (body.sampleRequest) {
      const valid = XMLValidator.validate(body.sampleRequest);
      if (valid !== true) issues.push({ path: 'body.sampleRequest', message: `is not well-formed XML: ${valid.err.msg} (line ${valid.err.line})` });
    }
  } else {
    need('restMethodType');
    if (body.restMethodType !== 'GET') {
      need('sampleRequest');
      if (body.sampleRequest) {
        try {
          JSON.parse(body.sampleRequest);
        } catch {
          issues.push({ path: 'body.sampleRequest', message: 'is not valid JSON' });
        }
      }
    }
  }
  if (channel === 'SMS' && body.smtpHost !== undefined) issues.push({ path: 'body.smtpHost', message: 'SMS configurations have no SMTP fields' });
  return issues;
}

export function columnsOf(body: ConfigBody): ConfigColumns {
  const columns: ConfigColumns = {
    config_name: body.configName,
    transport: body.transport,
    service_url: body.serviceUrl ?? null,
    sample_request: body.sampleRequest ?? null,
    service_username: body.serviceUsername ?? null,
    service_password: body.servicePassword ?? undefined,
    soap_method_name: body.soapMethodName ?? null,
    rest_method_type: body.restMethodType ?? null,
    rate_per_second: body.ratePerSecond ?? null,
    burst: body.burst ?? null,
  };
  if (body.transport === 'SMTP' || body.smtpHost !== undefined) {
    Object.assign(columns, {
      smtp_host: body.smtpHost ?? null,
      smtp_port: body.smtpPort ?? null,
      smtp_username: body.smtpUsername ?? null,
      smtp_password: body.smtpPassword ?? undefined,
      smtp_use_ssl: body.smtpUseSsl ?? false,
      smtp_use_tls: body.smtpUseTls ?? false,
      smtp_allow_plain: body.smtpAllowPlain ?? false,
    });
  }
  return columns;
}
