/**
 * `{{token}}` substitution in a peer's sample request. Each value is escaped for the body it lands in, so a
 * value can never change the request's structure: XML text for SOAP, JSON string content for REST.
 */
/** Text made safe for HTML and XML alike (an email's body, a SOAP request): `&#39;` is a quote in both. */
export function escapeMarkup(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** The inside of a JSON string literal: JSON.stringify's escaping without its quotes. */
export function escapeJsonString(value: string): string {
  return JSON.stringify(value).slice(1, -1);
}

export function fillTokens(sample: string, values: Record<string, string>, escape: (value: string) => string): string {
  return sample.replace(/\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g, (token, name: string) => (name in values ? escape(values[name]) : token));
}

/** A text on one line: line breaks (which would start a new header) become spaces. */
export const singleLine = (text: string) => text.replace(/[\r\n]+/g, ' ');
