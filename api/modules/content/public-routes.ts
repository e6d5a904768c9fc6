import { Type } from '@sinclair/typebox';
import { AppDeps } from '../../deps';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { notFound } from '../../../lib/errors';
import { COMPONENT_TYPES } from '../../../data/content/component-types';
import { SiteId } from '../../http/common-schemas';
import { publishedBySlug } from '../../../data/content/components';
import { publishedSchema } from './collection-schemas';

const PublicParams = Type.Object({ siteId: SiteId, slug: Type.String({ minLength: 1, maxLength: 200 }) });

/**
 * The runtime visitors see: `GET /api/public/sites/{siteId}/{pages|web-content|navigation|forms}/{slug}`
 * serves the published snapshot only, never a draft; 404 before the first publish and once archived.
 */
export function publicRoutes({ db }: AppDeps): AnyRoute[] {
  return COMPONENT_TYPES.filter((type) => type.publicPath).map((type) =>
    defineRoute({
      method: 'get',
      path: `/api/public/sites/:siteId/${type.publicPath}/:slug`,
      tag: 'public',
      summary: `The published ${type.type} with that slug`,
      access: access.public,
      params: PublicParams,
      responses: { 200: { description: 'the published snapshot', schema: publishedSchema(type) } },
      errors: ['NOT_FOUND'],
      handler: async (ctx, { params }) => {
        // The slug of the published snapshot, which a later draft may have changed.
        const row = await publishedBySlug(db, { type, siteId: params.siteId, slug: params.slug });
        if (!row) throw notFound(`Site ${params.siteId} has no published ${type.type} ${params.slug}.`);
        ctx.body = { ...row.published_snapshot, publishedRev: row.published_rev, publishedAt: row.published_at.toISOString() };
      },
    }),
  );
}
