import { Knex } from 'knex';
import type { Actor } from '../../domain/actor';

/** Each site's content settings (migration 035); a site without a row has the defaults. */
export const CONTENT_SITE_TABLE = 'settings.content_site';

export interface ContentSiteSettings {
  siteId: string;
  /** Published reads in one language fill an empty text from the other. On by default. */
  localeFallback: boolean;
  updatedBy: string | null;
  updatedAt: string | null;
}

interface ContentSiteRow {
  site_id: string;
  locale_fallback: boolean;
  updated_by: string | null;
  updated_at: Date;
}

const present = (siteId: string, row: ContentSiteRow | undefined): ContentSiteSettings => ({
  siteId,
  localeFallback: row?.locale_fallback ?? true,
  updatedBy: row?.updated_by ?? null,
  updatedAt: row?.updated_at.toISOString() ?? null,
});

export async function contentSiteSettings(db: Knex, siteId: string): Promise<ContentSiteSettings> {
  return present(siteId, await db<ContentSiteRow>(CONTENT_SITE_TABLE).where({ site_id: siteId }).first());
}

export async function saveContentSiteSettings(db: Knex, args: { siteId: string; localeFallback: boolean; actor: Actor }): Promise<ContentSiteSettings> {
  const [row] = (await db(CONTENT_SITE_TABLE)
    .insert({ site_id: args.siteId, locale_fallback: args.localeFallback, updated_by: args.actor.id, updated_at: db.fn.now() })
    .onConflict('site_id')
    .merge()
    .returning('*')) as ContentSiteRow[];
  return present(args.siteId, row);
}
