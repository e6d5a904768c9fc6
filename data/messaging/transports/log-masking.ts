/**
 * What an integration log row may keep of a call: everything but credentials. Those rows are archived into
 * CSVs every member of the site can download, so a credential is masked before the row is written.
 */
export const LOG_MASK = '***';

/** Names under which credentials travel: keys, tokens, secrets, passwords, signatures, auth, and their variants. */
const SENSITIVE_NAME = /key|token|secret|passw|pwd|signature|^sig$|auth|credential|session/i;

export const isSensitiveName = (name: string) => SENSITIVE_NAME.test(name);

const decoded = (text: string) => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

/** The URL with any userinfo password and the value of every sensitive query parameter (`?apikey=`, `&sig=`, …) masked. */
export function maskUrl(url: string): string {
  const queryAt = url.indexOf('?');
  const base = (queryAt === -1 ? url : url.slice(0, queryAt)).replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/]*:)[^@/]*@/i, `$1${LOG_MASK}@`);
  if (queryAt === -1) return base;
  const [query, ...fragment] = url.slice(queryAt + 1).split('#');
  const masked = query
    .split('&')
    .map((pair) => {
      const [name, ...value] = pair.split('=');
      return value.length > 0 && isSensitiveName(decoded(name)) ? `${name}=${LOG_MASK}` : pair;
    })
    .join('&');
  return `${base}?${masked}${fragment.length > 0 ? `#${fragment.join('#')}` : ''}`;
}

/** Values under sensitive names in a JSON body, at any depth. */
function maskJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskJson);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, isSensitiveName(name) && (typeof inner === 'string' || typeof inner === 'number') ? LOG_MASK : maskJson(inner)]));
}

/** Text content of XML elements with sensitive names (`<apiKey>…</apiKey>`, `<ns:Password>…</ns:Password>`). */
function maskXml(text: string): string {
  return text.replace(/<((?:[\w.-]+:)?([\w.-]+))(\s[^>]*)?>([^<]*)<\/\1>/g, (element, tag: string, local: string, attributes: string | undefined) =>
    isSensitiveName(local) ? `<${tag}${attributes ?? ''}>${LOG_MASK}</${tag}>` : element,
  );
}

/** A request or answer body as logged: the known secrets (the stored password) and credential-named fields masked. */
export function maskBody(text: string, secrets: Array<string | null>): string {
  let masked = text;
  for (const secret of secrets) if (secret && secret.length >= 3) masked = masked.split(secret).join(LOG_MASK);
  try {
    return JSON.stringify(maskJson(JSON.parse(masked)));
  } catch {
    return maskXml(masked);
  }
}
