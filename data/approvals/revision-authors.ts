import { Knex } from 'knex';
import { RELEASE } from '../../domain/approvals';
import { componentType } from '../content/component-types';
import { findComponent } from '../content/components';
import { itemsOfRelease } from '../content/releases';
import { contentAuthorsOf } from '../content/revisions';

type Item = { component_type: string; component_id: string; revision: number };

/**
 * Who wrote what an approval would publish (`contentAuthorsOf`): the item's content since it was last
 * published, up to the revision asked for; for a release, each item's (its items are locked while it waits).
 */
export async function revisionAuthorsOf(db: Knex, approval: { componentType: string; resourceId: string; revision: number }): Promise<string[]> {
  const items: Item[] =
    approval.componentType === RELEASE
      ? await itemsOfRelease(db, approval.resourceId)
      : [{ component_type: approval.componentType, component_id: approval.resourceId, revision: approval.revision }];
  const authors = new Set<string>();
  for (const item of items) {
    const type = componentType(item.component_type);
    if (!type) continue;
    const published = (await findComponent(db, type, item.component_id))?.published_rev ?? null;
    for (const author of await contentAuthorsOf(db, type, item.component_id, { after: published, upTo: item.revision })) authors.add(author);
  }
  return [...authors];
}
