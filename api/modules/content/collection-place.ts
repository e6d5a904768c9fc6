import { AppDeps } from '../../deps';
import { Identity, requireSiteMember } from '../../http/identity';
import { access } from '../../http/route';
import { ErrorCode, forbidden, notFound } from '../../../lib/errors';
import { uniqueOr409 } from '../../../data/db-errors';
import { ComponentType } from '../../../data/content/component-types';
import { ComponentRow, findComponent, presentComponent, Written } from '../../../data/content/components';
import { rowAtRevision } from '../../../data/content/revisions';
import { entitySchema } from './collection-schemas';

/** What every route of one type's collection shares. */
export function collectionPlace(deps: AppDeps, type: ComponentType) {
  const { db } = deps;
  const tag = type.collection.split('/')[2];
  const label = type.type;
  const valuesOf = (body: Record<string, unknown>) => {
    const { name, siteId: _siteId, ...fields } = body;
    return { name: name as string, fields };
  };
  // Who writes this type: EDITOR, or ADMIN alone for approval chains (workflow definitions).
  const AUTHOR = access.roles(type.authorRole ?? 'EDITOR');
  const entity = entitySchema(type);
  // The codes of the type's own refusals of a write (archive files are records).
  const writeRefusals: ErrorCode[] = type.refuseWrite ? ['ARCHIVE_READ_ONLY'] : [];
  const slugTaken = <T>(write: () => Promise<T>) => uniqueOr409(write, 'COMPONENT_SLUG_TAKEN', `Another ${label} of this site has that slug.`);

  /** The entity, in a site the caller belongs to; 404 for an unknown id. */
  const memberEntity = async (id: string, identity: Identity): Promise<ComponentRow> => {
    const row = await findComponent(db, type, id);
    if (!row) throw notFound(`No ${label} ${id}.`);
    requireSiteMember(identity, row.site_id);
    return row;
  };
  /** The type's own refusals (archive files are records) for a write to `current`, or one making it `next`. */
  const refuseWrite = (current: ComponentRow, next?: Record<string, unknown>) => {
    const why = type.refuseWrite?.(current, next);
    if (why) throw forbidden(why, 'ARCHIVE_READ_ONLY');
  };
  /** The entity as it was at `rev`; 404 REVISION_NOT_FOUND when it has no such revision. */
  const revisionOr404 = async (id: string, rev: number) => {
    const row = await rowAtRevision(db, type, id, rev);
    if (!row) throw notFound(`${label} ${id} has no revision ${rev}.`, 'REVISION_NOT_FOUND');
    return row;
  };
  const written = (result: Written | null, id: string) => {
    if (!result) throw notFound(`No ${label} ${id}.`);
    return presentComponent(type, result.row);
  };
  return { deps, db, type, tag, label, AUTHOR, entity, writeRefusals, valuesOf, slugTaken, memberEntity, refuseWrite, revisionOr404, written };
}
export type CollectionPlace = ReturnType<typeof collectionPlace>;
