import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { ChannelConfigRow } from '../../data/messaging/channel-configs';
import type { IntegrationLogEntry } from '../../data/messaging/integration-log';
import { escapeJsonString, escapeMarkup, fillPeerTokens } from '../../domain/tokens';
import { DeliveryFailure } from './delivery-failure';
import { maskBody, maskUrl } from './log-masking';
import { guardedFetch, OutboundPolicy, readCapped } from './outbound';

const MAX_LOGGED_BODY = 64 * 1024;
const soapParser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: true });

/** What a call to a SOAP or REST peer needs: a channel configuration's, or a SOAP component's published revision. */
export type PeerSettings = Pick<
  ChannelConfigRow,
  'transport' | 'service_url' | 'soap_method_name' | 'rest_method_type' | 'sample_request' | 'service_username'
>;

/**
 * The request a SOAP or REST configuration makes for these token values, each escaped for its body. With
 * the stored password, `{{servicePassword}}` (and `{{serviceUsername}}`) carry the credentials in the body
 * for peers that want them there, so the sample request itself holds none.
 */
export function renderPeerRequest(
  config: PeerSettings,
  values: Record<string, string>,
  password?: string | null,
): { method: string; headers: Record<string, string>; body: string | undefined } {
  const sample = config.sample_request ?? '';
  const tokens = password === undefined ? values : { ...values, servicePassword: password ?? '', serviceUsername: config.service_username ?? '' };
  if (config.transport === 'SOAP') {
    return {
      method: 'POST',
      headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: config.soap_method_name ?? '' },
      body: fillPeerTokens(sample, tokens, escapeMarkup),
    };
  }
  const method = config.rest_method_type ?? 'POST';
  return { method, headers: { 'content-type': 'application/json' }, body: method === 'GET' ? undefined : fillPeerTokens(sample, tokens, escapeJsonString) };
}

/** Whether a rendered body parses as what its transport sends: XML for SOAP, JSON for REST. */
export function rendersWellFormed(config: PeerSettings, body: string | undefined): string | null {
  if (body === undefined) return null;
  if (config.transport === 'SOAP') {
    const result = XMLValidator.validate(body);
    return result === true ? null : `not well-formed XML: ${result.err.msg} (line ${result.err.line})`;
  }
  try {
    JSON.parse(body);
    return null;
  } catch (error) {
    return `not valid JSON: ${(error as Error).message}`;
  }
}

/** A SOAP 1.1 or 1.2 Fault in an answer: its code and string; null when the answer holds none. */
function soapFault(body: string): { code: string | null; string: string } | null {
  if (!/Fault/.test(body)) return null;
  try {
    const fault = (soapParser.parse(body) as { Envelope?: { Body?: { Fault?: Record<string, unknown> } } }).Envelope?.Body?.Fault;
    if (!fault) return null;
    const text = (value: unknown) => (value === undefined || value === null ? null : typeof value === 'string' ? value : JSON.stringify(value));
    const reason = text(fault.faultstring) ?? text((fault.Reason as { Text?: unknown } | undefined)?.Text) ?? 'SOAP Fault';
    const code = text(fault.faultcode) ?? text((fault.Code as { Value?: unknown } | undefined)?.Value);
    return { code, string: reason };
  } catch {
    return null;
  }
}

/** The SOAP Body of an answer, parsed (namespace prefixes dropped); the whole document when it has none. */
export function soapBody(text: string): unknown {
  const parsed = soapParser.parse(text) as { Envelope?: { Body?: unknown } };
  return parsed.Envelope?.Body ?? parsed;
}

const clip = (text: string) => (text.length > MAX_LOGGED_BODY ? `${text.slice(0, MAX_LOGGED_BODY)}…` : text);

/** The largest peer answer read: a SOAP or REST answer to a send is small; more is refused. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** The longest a peer is given to answer one message. */
const PEER_TIMEOUT_MS = 30000;

/**
 * Calls a SOAP or REST peer with the rendered request: basic auth when configured, no redirects followed,
 * a SOAP Fault or a non-2xx answer a failure (5xx and network errors temporary, the rest permanent). Every
 * call is recorded (`record`: the integration log, data/messaging/integration-log.ts) stamped with the site,
 * the password masked.
 */
export async function callPeer(args: {
  record: (entry: IntegrationLogEntry) => Promise<void>;
  config: PeerSettings;
  password: string | null;
  tokens: Record<string, string>;
  siteId: string;
  component: string;
  outbound: OutboundPolicy;
  /** How long the peer has to answer (30 s at most). */
  timeoutMs?: number;
}): Promise<{ statusCode: number; body: string }> {
  const { config } = args;
  const url = config.service_url as string;
  const request = renderPeerRequest(config, args.tokens, args.password);
  const headers = { ...request.headers };
  if (config.service_username) headers.authorization = `Basic ${Buffer.from(`${config.service_username}:${args.password ?? ''}`).toString('base64')}`;
  // The channel's own secret: masked in the log in every form it may travel in (log-masking.ts).
  const secrets = [args.password];
  const started = Date.now();
  let statusCode: number | null = null;
  let responseBody = '';
  let failure: DeliveryFailure | null = null;
  try {
    // The socket connects only to an address the policy allows (checked at connect time); the answer is capped.
    const answer = await guardedFetch(
      url,
      {
        method: request.method,
        headers,
        body: request.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(Math.min(args.timeoutMs ?? PEER_TIMEOUT_MS, PEER_TIMEOUT_MS)),
      },
      args.outbound,
    );
    statusCode = answer.status;
    responseBody = await readCapped(answer.body as ReadableStream<Uint8Array> | null, MAX_ANSWER_BYTES);
    const fault = config.transport === 'SOAP' ? soapFault(responseBody) : null;
    if (statusCode >= 300 && statusCode < 400)
      failure = new DeliveryFailure(`${config.transport} peer answered ${statusCode} (a redirect, not followed)`, true);
    else if (fault) failure = new DeliveryFailure(`SOAP Fault: ${fault.string}`, true, fault);
    else if (statusCode < 200 || statusCode >= 300) failure = new DeliveryFailure(`${config.transport} peer answered ${statusCode}`, statusCode < 500);
  } catch (error) {
    // Unreachable only when no connection was made at all; a timeout or a broken answer is this message's.
    const cause = (error as { cause?: { code?: string } }).cause;
    const refused = ['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH'].includes((error as { code?: string }).code ?? cause?.code ?? '');
    failure =
      error instanceof DeliveryFailure
        ? error
        : new DeliveryFailure(`${config.transport} peer unreachable: ${(error as Error).message}`, false, undefined, refused);
  }
  await args.record({
    site_id: args.siteId,
    component: args.component,
    operation: config.transport === 'SOAP' ? config.soap_method_name : request.method,
    url: maskUrl(url, secrets),
    method: request.method,
    status_code: statusCode,
    duration_ms: Date.now() - started,
    outcome: failure ? 'FAILED' : 'SUCCESS',
    request_body: request.body === undefined ? null : clip(maskBody(request.body, secrets)),
    response_body: clip(maskBody(responseBody, secrets)),
    error: failure ? maskBody(failure.message, secrets) : null,
  });
  if (failure) throw failure;
  return { statusCode: statusCode as number, body: responseBody };
}
