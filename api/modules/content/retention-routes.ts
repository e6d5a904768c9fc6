import { Type } from '@sinclair/typebox';
import { AppDeps } from '../../deps';
import { resourceRoutes } from '../../http/resource-routes';
import { access } from '../../http/route';
import { pageQueryFields, pageSchema } from '../../http/pagination';
import { Instant, Nullable, SiteId } from '../../http/common-schemas';
import { componentType } from '../../../data/content/component-types';
import {
  deleteRetentionRule,
  findRetentionRule,
  listRetentionRules,
  RevisionRetentionRow,
  RevisionRetentionValues,
  saveRetentionRule,
} from '../../../data/content/revision-retention';
import { ComponentTypeName } from '../approvals/schemas';
import { actorOf } from './collection-routes';

const RetentionBody = Type.Object(
  {
    componentType: ComponentTypeName,
    siteId: Type.Union([SiteId, Type.Null()], { description: 'null: the global rule, for every site without its own' }),
    keepLast: Type.Integer({ minimum: 1, maximum: 10000, description: 'revisions kept besides those published, awaiting approval or scheduled' }),
  },
  { additionalProperties: false },
);

const RetentionSchema = Type.Object({
  id: Type.String(),
  componentType: Type.String(),
  siteId: Nullable(Type.String()),
  keepLast: Type.Integer(),
  updatedBy: Nullable(Type.String()),
  createdAt: Instant,
  updatedAt: Instant,
});

const present = (row: RevisionRetentionRow) => ({
  id: row.id,
  componentType: row.component_type,
  siteId: row.site_id,
  keepLast: row.keep_last,
  updatedBy: row.updated_by,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

// The body's schema admits only the registered types' names.
const typeOf = (values: RevisionRetentionValues) => componentType(values.componentType)!;

/**
 * Revision retention rules (ADMIN): per component type, in a site or globally, how many revisions each
 * item keeps besides the ones always kept. Saving a rule prunes what it covers at once; each later write
 * prunes its item.
 */
export function retentionRoutes({ db }: AppDeps) {
  return resourceRoutes({
    path: '/api/content/revision-retention',
    tag: 'content',
    noun: { one: 'rule', many: 'rules' },
    access: access.roles('ADMIN'),
    summaries: {
      list: 'Revision retention rules',
      create: 'Keep the last N revisions of a component type in a site, or globally (siteId null), and every published, pending or scheduled one',
      read: 'One revision retention rule',
      update: 'Replace a revision retention rule (it prunes what it now covers)',
      remove: 'Delete a revision retention rule (revisions are kept from then on)',
    },
    schemas: {
      listQuery: Type.Object({ ...pageQueryFields }),
      page: pageSchema(RetentionSchema),
      item: RetentionSchema,
      create: RetentionBody,
      update: RetentionBody,
      idParams: Type.Object({ id: Type.String({ format: 'uuid' }) }),
    },
    errors: { create: ['CONFLICT'], update: ['CONFLICT'] },
    db,
    data: {
      list: (database, query) => listRetentionRules(database, query),
      create: (database, values, identity) => saveRetentionRule(database, { values, type: typeOf(values), actor: actorOf(identity) }),
      read: findRetentionRule,
      update: (database, id, values, identity) => saveRetentionRule(database, { id, values, type: typeOf(values), actor: actorOf(identity) }),
      remove: deleteRetentionRule,
    },
    present,
  });
}
