/**
 * `{{token}}` substitution, the one filler of the platform: email templates (`{{path.to.value}}`) and peers'
 * sample requests (`{{name}}`). Each value is escaped for the text it lands in, so a value can never change
 * that text's structure: HTML or XML text, JSON string content, a header on one line. Nothing is evaluated.
 */

/** Text made safe for HTML and XML alike (an email's body, a SOAP request): `&#39;` is a quote in both. */
export function escapeMarkup(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** The inside of a JSON string literal: JSON.stringify's escaping without its quotes. */
export function escapeJsonString(value: string): string {
  return JSON.stringify(value).slice(1, -1);
}

const TOKEN = /\{\{\s*([A-Za-z0-9_$-]+(?:\.[A-Za-z0-9_$-]+)*)\s*\}\}/g;

/**
 * Replaces each token with its value, escaped. A token without a value becomes what `missing` answers: a
 * peer's sample keeps it as written, an email renders it empty and reports it.
 */
export function fillTokens(
  text: string,
  args: { valueOf: (path: string) => string | undefined; escape: (value: string) => string; missing: (path: string, token: string) => string },
): string {
  return text.replace(TOKEN, (token, path: string) => {
    const value = args.valueOf(path);
    return value === undefined ? args.missing(path, token) : args.escape(value);
  });
}

/** A peer's tokens: flat names; one without a value stays as written. */
export function fillPeerTokens(sample: string, values: Record<string, string>, escape: (value: string) => string): string {
  return fillTokens(sample, {
    valueOf: (name) => (Object.prototype.hasOwnProperty.call(values, name) ? values[name] : undefined),
    escape,
    missing: (_path, token) => token,
  });
}

/** A text on one line: line breaks (which would start a new header) become spaces. */
export const singleLine = (text: string) => text.replace(/[\r\n]+/g, ' ');
