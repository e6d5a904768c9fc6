import { randomBytes } from 'node:crypto';
import { escapeJsonString, escapeMarkup } from '../../domain/tokens';

/**
 * What an integration log row may keep of a call: everything but credentials. Those rows are archived into
 * CSVs every member of the site can download, so a credential is masked before the row is written, in
 * whatever form it takes: under a credential's name, in a query or a path, in userinfo, in CDATA or an
 * attribute, as a name/value pair, or as the channel's own stored secret, encoded or not.
 */
export const LOG_MASK = '***';

/** Names under which credentials travel: keys, tokens, secrets, passwords, signatures, auth, and their variants. */
const SENSITIVE_NAME = /key|token|secret|passw|^pass$|pwd|signature|^sig$|auth|credential|session|jwt|bearer|cookie/i;

export const isSensitiveName = (name: string) => SENSITIVE_NAME.test(name.trim());

/**
 * Query and matrix parameters whose values are kept: paging, format and version words, which no peer uses
 * for a credential. Every other value is masked, whatever its name (`?pass=`, `?jwt=`, `?x=`).
 */
const KEPT_PARAMETERS = new Set([
  'page',
  'per_page',
  'page_size',
  'pagesize',
  'size',
  'limit',
  'offset',
  'sort',
  'order',
  'format',
  'lang',
  'locale',
  'v',
  'version',
  'wsdl',
  'action',
  'op',
  'operation',
  'method',
  'type',
]);

const decoded = (text: string) => {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
};

/** `name=value&name=value` (or `;`-separated) with every value masked but those of kept names. */
function maskParameters(parameters: string, separator: string): string {
  return parameters
    .split(separator)
    .map((pair) => {
      const [name, ...value] = pair.split('=');
      return value.length > 0 && !KEPT_PARAMETERS.has(decoded(name).toLowerCase()) ? `${name}=${LOG_MASK}` : pair;
    })
    .join(separator);
}

/**
 * A path segment that looks like a credential rather than a name: long, of token characters, with letters
 * and digits (`bot123456:AAH…`, a webhook's secret). Ids that are numbers, and words, stay.
 */
const isCredentialShaped = (segment: string) => {
  const text = decoded(segment);
  return text.length >= 16 && /^[A-Za-z0-9_:.~+=-]+$/.test(text) && /[A-Za-z]/.test(text) && /[0-9]/.test(text);
};

/** One path: credential-shaped segments masked, matrix parameters (`;apikey=`) masked by the query's rule. */
function maskPath(path: string): string {
  return path
    .split('/')
    .map((segment) => {
      const [name, ...matrix] = segment.split(';');
      const kept = isCredentialShaped(name) ? LOG_MASK : name;
      return matrix.length > 0 ? `${kept};${maskParameters(matrix.join(';'), ';')}` : kept;
    })
    .join('/');
}

/** The forms a secret travels in: as stored, escaped for XML or JSON, URL-encoded (form or path), base64. */
function secretForms(secrets: Array<string | null>): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (!secret || secret.length < 3) continue;
    // As the platform escapes it into a body (tokens.ts), and as other serializers escape text and quotes.
    const textOnly = secret.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    for (const form of [
      secret,
      escapeMarkup(secret),
      textOnly,
      textOnly.replace(/"/g, '&quot;').replace(/'/g, '&apos;'),
      escapeJsonString(secret),
      encodeURIComponent(secret),
      encodeURIComponent(secret).replace(/%20/g, '+'),
      Buffer.from(secret).toString('base64'),
      Buffer.from(secret).toString('base64url'),
    ]) {
      forms.add(form);
    }
  }
  // The longest first, so that a form containing another is masked whole.
  return [...forms].sort((a, b) => b.length - a.length);
}

const maskSecrets = (text: string, secrets: Array<string | null>) => secretForms(secrets).reduce((masked, form) => masked.split(form).join(LOG_MASK), text);

/**
 * The URL with its credentials masked: userinfo (a bare token whole, a password after its user), every
 * query, matrix and fragment value outside the kept names, credential-shaped path segments, and the
 * channel's own secrets in any form.
 */
export function maskUrl(url: string, secrets: Array<string | null> = []): string {
  const text = maskSecrets(url, secrets);
  const parts = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/is.exec(text);
  if (!parts) return text;
  const [, scheme, authority, path, query, fragment] = parts;
  const at = authority.lastIndexOf('@');
  const userinfo = at === -1 ? null : authority.slice(0, at);
  const host = at === -1 ? authority : authority.slice(at + 1);
  const user = userinfo === null ? '' : userinfo.includes(':') ? `${userinfo.slice(0, userinfo.indexOf(':'))}:${LOG_MASK}@` : `${LOG_MASK}@`;
  return `${scheme}${user}${host}${maskPath(path)}${query === undefined ? '' : `?${maskParameters(query, '&')}`}${fragment === undefined ? '' : `#${maskParameters(fragment, '&')}`}`;
}

/**
 * Every URL in a text (an error message, a body) masked as `maskUrl` does. A scheme of at most 32 characters,
 * not preceded by scheme characters: a megabyte of letters with no `://` costs one pass, not one per letter.
 */
const maskUrlsIn = (text: string) => text.replace(/(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{0,31}:\/\/[^\s"'<>]+/gi, (url) => maskUrl(url));

/** The field names that say which name a name/value pair carries, and those that carry its value. */
const PAIR_NAME_FIELDS = ['name', 'key', 'field', 'param', 'parameter', 'header'];
const PAIR_VALUE_FIELDS = ['value', 'val', 'content'];

/**
 * Values under sensitive names in a JSON body, at any depth and whatever they hold (a string, an array, an
 * object), the values of name/value pairs that name one, and JSON carried inside a string.
 */
function maskJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskJson);
  if (typeof value === 'string') return maskJsonInString(value);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value);
  const namesCredential = entries.some(
    ([field, inner]) => PAIR_NAME_FIELDS.includes(field.toLowerCase()) && typeof inner === 'string' && isSensitiveName(inner),
  );
  return Object.fromEntries(
    entries.map(([name, inner]) => {
      const masked = (isSensitiveName(name) || (namesCredential && PAIR_VALUE_FIELDS.includes(name.toLowerCase()))) && inner !== null;
      return [name, masked ? LOG_MASK : maskJson(inner)];
    }),
  );
}

/** A string that is itself JSON (an object or an array) is masked as JSON and written back; any other stays. */
function maskJsonInString(text: string): string {
  const trimmed = text.trim();
  if (!((trimmed.startsWith('{') && trimmed.endsWith('}')) || (trimmed.startsWith('[') && trimmed.endsWith(']')))) return text;
  try {
    return JSON.stringify(maskJson(JSON.parse(trimmed)));
  } catch {
    return text;
  }
}

/** A form-encoded body (`a=1&b=2`): every value masked but those of the kept names, as a query's. */
const FORM_ENCODED = /^[^\s=&]+=[^\s&]*(?:&[^\s=&]+=[^\s&]*)*$/;

/**
 * CDATA sections set aside as numbered stand-ins while the patterns run, and put back after: found by a
 * linear scan, so an answer full of unclosed sections costs no more than any other (a pattern that matched
 * them in place went over the rest of the text once per section: seconds for a hostile megabyte).
 */
function withCdataSetAside(text: string, mask: (text: string) => string): string {
  // A nonce of its own, so that a stand-in written into the text by its sender puts back nothing.
  const nonce = randomBytes(8).toString('hex');
  const standIn = new RegExp(`\uE000${nonce}:(\\d+)\uE001`, 'g');
  const sections: string[] = [];
  let plain = '';
  let from = 0;
  for (;;) {
    const open = text.indexOf('<![CDATA[', from);
    const close = open === -1 ? -1 : text.indexOf(']]>', open + 9);
    if (close === -1) break;
    plain += `${text.slice(from, open)}\uE000${nonce}:${sections.length}\uE001`;
    sections.push(text.slice(open, close + 3));
    from = close + 3;
  }
  plain += text.slice(from);
  // A section is put back masked in its turn: XML carried inside CDATA (an envelope in an envelope) is XML too.
  const masked = (section: string) => `<![CDATA[${mask(section.slice(9, -3))}]]>`;
  return sections.length === 0
    ? mask(plain)
    : mask(plain).replace(standIn, (found, index: string) => (sections[Number(index)] === undefined ? found : masked(sections[Number(index)])));
}

// A start tag ends before the next `<` (XML allows none inside one): a text of unclosed tags is scanned once, not
// to its end from each of them.
const ELEMENT = /<((?:[\w.-]+:)?([\w.-]+))(\s[^<>]*)?>([^<]*)<\/\1>/g;
const START_TAG = /<[\w.:-]+\s[^<>]*>/g;
const ATTRIBUTE = /(\s(?:[\w.-]+:)?([\w.-]+)\s*=\s*)("[^"]*"|'[^']*')/g;
const NAME_ELEMENT_THEN_VALUE = /(<((?:[\w.-]+:)?(?:name|key|field))(?:\s[^<>]*)?>([^<]*)<\/\2>\s*<((?:[\w.-]+:)?value)(?:\s[^<>]*)?>)([^<]*)(<\/\4>)/gi;

const quoted = (value: string) => `${value[0]}${LOG_MASK}${value[0]}`;

/**
 * XML: the content of elements with sensitive names (`<apiKey>…</apiKey>`, `<ns:Password><![CDATA[…]]>`),
 * attributes with sensitive names (`<Auth password="…">`), and name/value pairs, as attributes
 * (`<Param name="password" value="…"/>`) or as elements (`<Name>token</Name><Value>…</Value>`).
 */
function maskXml(text: string): string {
  return withCdataSetAside(text, maskXmlWithoutCdata);
}

function maskXmlWithoutCdata(text: string): string {
  const elements = text.replace(ELEMENT, (element, tag: string, local: string, attributes: string | undefined) =>
    isSensitiveName(local) ? `<${tag}${attributes ?? ''}>${LOG_MASK}</${tag}>` : element,
  );
  const attributes = elements.replace(START_TAG, (startTag) => {
    const pairName = /\s(?:[\w.-]+:)?(?:name|key|field)\s*=\s*("([^"]*)"|'([^']*)')/i.exec(startTag);
    const namesCredential = pairName !== null && isSensitiveName(pairName[2] ?? pairName[3] ?? '');
    return startTag.replace(ATTRIBUTE, (attribute, head: string, local: string, value: string) =>
      isSensitiveName(local) || (namesCredential && /^value$/i.test(local)) ? `${head}${quoted(value)}` : attribute,
    );
  });
  return attributes.replace(NAME_ELEMENT_THEN_VALUE, (pair, head: string, _nameTag: string, name: string, _valueTag: string, _value: string, tail: string) =>
    isSensitiveName(name) ? `${head}${LOG_MASK}${tail}` : pair,
  );
}

/**
 * A request or answer body (or an error message) as logged: the channel's own secrets in every form,
 * credential-named fields and pairs, and the credentials of every URL in it masked.
 */
export function maskBody(text: string, secrets: Array<string | null>): string {
  const masked = maskSecrets(text, secrets);
  let structured: string;
  try {
    structured = JSON.stringify(maskJson(JSON.parse(masked)));
  } catch {
    structured = FORM_ENCODED.test(masked) ? maskParameters(masked, '&') : maskXml(masked);
  }
  return maskUrlsIn(structured);
}
