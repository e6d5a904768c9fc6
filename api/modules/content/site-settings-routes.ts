import { Type } from '@sinclair/typebox';
import { AppDeps } from '../../deps';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { requireSiteMember } from '../../http/identity';
import { Instant, Nullable, SiteId } from '../../http/common-schemas';
import { contentSiteSettings, saveContentSiteSettings } from '../../../data/content/site-settings';
import { actorOf } from './collection-routes';

const SiteParams = Type.Object({ siteId: SiteId });
const SettingsBody = Type.Object(
  { localeFallback: Type.Boolean({ description: 'published reads in one language fill an empty text from the other' }) },
  { additionalProperties: false },
);
const SettingsSchema = Type.Object({
  siteId: Type.String(),
  localeFallback: Type.Boolean(),
  updatedBy: Nullable(Type.String()),
  /** Null while the site has the defaults. */
  updatedAt: Nullable(Instant),
});

/** A site's content settings: read by its members, set by its ADMINs. */
export function siteSettingsRoutes({ db }: AppDeps): AnyRoute[] {
  const path = '/api/content/sites/:siteId/settings';
  return [
    defineRoute({
      method: 'get',
      path,
      tag: 'content',
      summary: "A site's content settings (locale fallback is on unless the site turned it off)",
      access: access.user,
      params: SiteParams,
      responses: { 200: { description: 'the settings', schema: SettingsSchema } },
      errors: [],
      handler: async (ctx, { params, identity }) => {
        requireSiteMember(identity, params.siteId);
        ctx.body = await contentSiteSettings(db, params.siteId);
      },
    }),
    defineRoute({
      method: 'put',
      path,
      tag: 'content',
      summary: "Set a site's content settings",
      access: access.roles('ADMIN'),
      params: SiteParams,
      body: SettingsBody,
      responses: { 200: { description: 'the settings', schema: SettingsSchema } },
      errors: [],
      handler: async (ctx, { params, body, identity }) => {
        requireSiteMember(identity, params.siteId);
        ctx.body = await saveContentSiteSettings(db, { siteId: params.siteId, localeFallback: body.localeFallback, actor: actorOf(identity) });
      },
    }),
  ];
}
