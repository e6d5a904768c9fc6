/** The two languages content is written in, and how a read in one falls back to the other. */

export const LOCALES = ['en', 'ar'] as const;
export type Locale = (typeof LOCALES)[number];

const otherThan = (locale: Locale): Locale => (locale === 'en' ? 'ar' : 'en');

/** Markup that shows something with no text in it. */
const MEDIA = /<(img|picture|video|audio|iframe|embed|object|svg)\b/i;

/**
 * Empty for a reader: missing, not text, or nothing a reader would see: white space, and the empty markup a
 * rich-text editor leaves behind (`<p></p>`, `<p><br></p>`, `&nbsp;`), unless it holds an image or media.
 */
function isEmpty(text: unknown): boolean {
  if (typeof text !== 'string') return true;
  const visible = text.replace(/<[^>]*>/g, '').replace(/&nbsp;|&#160;/gi, ' ');
  return visible.trim() === '' && !MEDIA.test(text);
}

/**
 * A copy of `data` in which each named bilingual text that is empty in `locale` takes the other language's
 * text, and the JSON pointers (under `base`) of the texts that did. A text empty in both stays as it is and
 * is not listed: nothing came from the fallback.
 */
export function fillFromOtherLocale(
  data: Record<string, unknown>,
  bilingualFields: readonly string[],
  locale: Locale,
  base = '/data',
): { data: Record<string, unknown>; fallbacks: string[] } {
  const filled = { ...data };
  const fallbacks: string[] = [];
  const other = otherThan(locale);
  for (const field of bilingualFields) {
    const text = filled[field];
    if (text === null || typeof text !== 'object' || Array.isArray(text)) continue;
    const both = text as Record<string, unknown>;
    if (!isEmpty(both[locale]) || isEmpty(both[other])) continue;
    filled[field] = { ...both, [locale]: both[other] };
    fallbacks.push(`${base}/${field}/${locale}`);
  }
  return { data: filled, fallbacks };
}
