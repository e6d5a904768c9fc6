/**
 * Renders an email template for one recipient: `{{path.to.value}}` tokens resolve against the variables by
 * JSON dot notation (array items by index). Values are HTML-escaped in the body and plain in the subject
 * (line breaks removed, so nothing can start a new header). A token without a value renders empty and is
 * reported. Templates are data: there are no helpers and nothing is evaluated.
 */
import { escapeMarkup, fillTokens, singleLine } from './tokens';

export type Locale = 'en' | 'ar';

export interface TemplateTexts {
  subject_en: string;
  body_en: string;
  subject_ar: string;
  body_ar: string;
}

export interface RenderedEmail {
  subject: string;
  html: string;
  missingVariables: string[];
}

function lookup(variables: unknown, path: string): unknown {
  let value: unknown = variables;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.prototype.hasOwnProperty.call(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

const asText = (value: unknown) =>
  typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);

function fill(text: string, variables: unknown, missing: Set<string>, escape: (value: string) => string): string {
  return fillTokens(text, {
    valueOf: (path) => {
      const value = lookup(variables, path);
      return value === undefined || value === null ? undefined : asText(value);
    },
    escape,
    missing: (path) => {
      missing.add(path);
      return '';
    },
  });
}

export function renderTemplate(template: TemplateTexts, variables: unknown, locale: Locale): RenderedEmail {
  const missing = new Set<string>();
  const subject = singleLine(fill(locale === 'ar' ? template.subject_ar : template.subject_en, variables, missing, singleLine)).trim();
  const body = fill(locale === 'ar' ? template.body_ar : template.body_en, variables, missing, escapeMarkup);
  const html = locale === 'ar' ? `<div dir="rtl" lang="ar">${body}</div>` : `<div lang="en">${body}</div>`;
  return { subject, html, missingVariables: [...missing] };
}
