import { Db } from '../../../data/db';
import { RELEASE } from '../../../domain/approvals';
import { itemComponents, itemsOfRelease, ReleaseItemRow, ReleaseRow } from '../../../data/content/releases';
import { openScheduledChange, ScheduledChangeRow } from '../../../data/approvals/scheduled-changes';

const iso = (value: Date | null) => value?.toISOString() ?? null;

/** How releases are answered, one at a time or in a page. */
export function releasePresenters(db: Db) {
  /** A release as answered; `scheduled` is its open scheduled change, `items` given for the whole release. */
  const present = async (release: ReleaseRow, count: number, scheduled: ScheduledChangeRow | undefined, items?: ReleaseItemRow[]) => {
    const components = items ? await itemComponents(db, items) : null;
    return {
      id: release.id,
      siteId: release.site_id,
      name: release.name,
      status: release.status === 'OPEN' && scheduled ? 'SCHEDULED' : release.status,
      version: release.version,
      publishAt: scheduled ? scheduled.due_at.toISOString() : null,
      failure: release.failure,
      itemCount: count,
      createdBy: release.created_by,
      createdAt: release.created_at.toISOString(),
      updatedAt: release.updated_at.toISOString(),
      publishedAt: iso(release.published_at),
      publishedBy: release.published_by,
      ...(items && components
        ? {
            items: items.map((item) => {
              const now = components.get(`${item.component_type}:${item.component_id}`);
              return {
                id: item.id,
                type: item.component_type,
                componentId: item.component_id,
                revision: item.revision,
                name: now?.name ?? null,
                componentStatus: now?.status ?? null,
                addedBy: item.added_by,
                addedAt: item.added_at.toISOString(),
              };
            }),
          }
        : {}),
    };
  };
  const presentWhole = async (release: ReleaseRow) => {
    const items = await itemsOfRelease(db, release.id);
    return present(release, items.length, await openScheduledChange(db, RELEASE, release.id), items);
  };
  return { present, presentWhole };
}
