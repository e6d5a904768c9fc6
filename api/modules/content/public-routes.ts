import { Type } from '@sinclair/typebox';
import { AppDeps } from '../../deps';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { notFound } from '../../../lib/errors';
import { bilingualFields, COMPONENT_TYPES } from '../../../data/content/component-types';
import { SiteId } from '../../http/common-schemas';
import { publishedBySlug } from '../../../data/content/components';
import { contentSiteSettings } from '../../../data/content/site-settings';
import { fillFromOtherLocale, Locale } from '../../../domain/locales';
import { publishedSchema } from './collection-schemas';

const PublicParams = Type.Object({ siteId: SiteId, slug: Type.String({ minLength: 1, maxLength: 200 }) });
const PublicQuery = Type.Object({
  locale: Type.Optional(
    Type.Union([Type.Literal('en'), Type.Literal('ar')], {
      description: 'read for this language: an empty text takes the other language where the site falls back (the default)',
    }),
  ),
});

/**
 * The runtime visitors see: `GET /api/public/sites/{siteId}/{pages|web-content|navigation|forms}/{slug}`
 * serves the published snapshot only, never a draft; 404 before the first publish and once archived.
 * Read for a language (`?locale=ar`), each bilingual text empty in it takes the other language's text,
 * field by field, unless the site has turned fallback off; `fallbacks` names the texts that did.
 */
export function publicRoutes({ db }: AppDeps): AnyRoute[] {
  return COMPONENT_TYPES.filter((type) => type.publicPath).map((type) => {
    const bilingual = bilingualFields(type);
    return defineRoute({
      method: 'get',
      path: `/api/public/sites/:siteId/${type.publicPath}/:slug`,
      tag: 'public',
      summary: `The published ${type.type} with that slug, optionally read for one language`,
      access: access.public,
      params: PublicParams,
      query: PublicQuery,
      responses: { 200: { description: 'the published snapshot', schema: publishedSchema(type) } },
      errors: ['NOT_FOUND'],
      handler: async (ctx, { params, query }) => {
        // The slug of the published snapshot, which a later draft may have changed.
        const row = await publishedBySlug(db, { type, siteId: params.siteId, slug: params.slug });
        if (!row) throw notFound(`Site ${params.siteId} has no published ${type.type} ${params.slug}.`);
        const published: Record<string, unknown> = { ...row.published_snapshot, publishedRev: row.published_rev, publishedAt: row.published_at.toISOString() };
        if (!query.locale) {
          ctx.body = published;
          return;
        }
        const locale = query.locale as Locale;
        const data = (published.data ?? {}) as Record<string, unknown>;
        const { localeFallback } = await contentSiteSettings(db, params.siteId);
        const read = localeFallback ? fillFromOtherLocale(data, bilingual, locale) : { data, fallbacks: [] };
        ctx.body = { ...published, data: read.data, locale, fallbacks: read.fallbacks };
      },
    });
  });
}
