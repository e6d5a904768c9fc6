import { withoutLinkSecrets } from '../../lib/link-secrets';

/**
 * Reads the reports a mail system sends back about a message: delivery status notifications (RFC 3464,
 * `multipart/report; report-type=delivery-status`) and complaint reports (ARF, RFC 5965,
 * `report-type=feedback-report`). Only the parts a decision needs are read: the MIME tree of the report
 * (nested at most a few levels), each part's headers, and the body of the machine-readable part.
 */

export type DeliveryReport =
  | {
      kind: 'bounce';
      /** A 5.x.x status: the address is gone for good. A 4.x.x one: the mail system gave up for a passing reason. */
      hard: boolean;
      /** The recipient's status and the remote's answer, as the report gives them. */
      detail: string;
      /** The whole report's text, where the original message's envelope sender may be quoted. */
      text: string;
    }
  | { kind: 'complaint'; detail: string; text: string };

interface MimePart {
  headers: Map<string, string>;
  body: string;
}

/** RFC 5322 header fields (folded lines unfolded), names in lower case; the first of a name wins. */
function headerFields(block: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!fields.has(name)) fields.set(name, line.slice(colon + 1).trim());
  }
  return fields;
}

function splitPart(raw: string): MimePart {
  const match = /\r?\n\r?\n/.exec(raw);
  const head = match ? raw.slice(0, match.index) : raw;
  const body = match ? raw.slice(match.index + match[0].length) : '';
  return { headers: headerFields(head), body };
}

const mediaType = (part: MimePart) => (part.headers.get('content-type') ?? 'text/plain').split(';')[0].trim().toLowerCase();

function parameter(part: MimePart, name: string): string | null {
  const match = new RegExp(`;\\s*${name}\\s*=\\s*(?:"([^"]*)"|([^;\\s]+))`, 'i').exec(part.headers.get('content-type') ?? '');
  return match ? (match[1] ?? match[2]) : null;
}

function decodedBody(part: MimePart): string {
  const encoding = (part.headers.get('content-transfer-encoding') ?? '').toLowerCase();
  if (encoding === 'base64') return Buffer.from(part.body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable')
    return part.body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return part.body;
}

/** Every leaf part of a MIME message, depth first; a multipart nested deeper than `depth` is not opened. */
function leaves(part: MimePart, depth = 4): MimePart[] {
  const boundary = parameter(part, 'boundary');
  if (!mediaType(part).startsWith('multipart/') || !boundary || depth === 0) return [part];
  const pieces = part.body.split(new RegExp(`^--${boundary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:--)?[ \\t]*\\r?$`, 'm'));
  // The preamble before the first boundary and the epilogue after the last are not parts.
  return pieces.slice(1, -1).flatMap((piece) => leaves(splitPart(piece.replace(/^\r?\n/, '')), depth - 1));
}

/** The per-recipient blocks of a delivery-status part: the first block is the message's own. */
const recipientBlocks = (body: string) =>
  body
    .split(/\r?\n\s*\r?\n/)
    .map(headerFields)
    .filter((fields) => fields.has('action'));

/**
 * What a report says, or null for a message that is not one (or reports nothing to act on: a delay, a
 * success). A bounce is read from the first recipient whose action is `failed`.
 */
export function readDeliveryReport(raw: Buffer | string): DeliveryReport | null {
  const text = typeof raw === 'string' ? raw : raw.toString('utf8');
  const message = splitPart(text);
  if (mediaType(message) !== 'multipart/report') return null;
  const reportType = (parameter(message, 'report-type') ?? '').toLowerCase();
  const parts = leaves(message);
  if (reportType === 'delivery-status') {
    const status = parts.find((part) => mediaType(part) === 'message/delivery-status');
    if (!status) return null;
    const failed = recipientBlocks(decodedBody(status)).find((fields) => fields.get('action')?.toLowerCase() === 'failed');
    const code = failed?.get('status') ?? '';
    if (!failed || !/^[45]\.\d{1,3}\.\d{1,3}/.test(code)) return null;
    const diagnostic = failed.get('diagnostic-code');
    // The far side's diagnostic often quotes the envelope sender: its VERP tag must not reach the log row.
    const detail = withoutLinkSecrets(`bounced: ${code}${diagnostic ? ` (${diagnostic})` : ''}`).slice(0, 1000);
    return { kind: 'bounce', hard: code.startsWith('5'), detail, text };
  }
  if (reportType === 'feedback-report') {
    const feedback = parts.find((part) => mediaType(part) === 'message/feedback-report');
    if (!feedback) return null;
    const type = headerFields(decodedBody(feedback)).get('feedback-type') ?? 'abuse';
    return { kind: 'complaint', detail: `complaint: ${type}`.slice(0, 1000), text };
  }
  return null;
}
