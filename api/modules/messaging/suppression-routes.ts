import { Type } from '@sinclair/typebox';
import { AppDeps } from '../../deps';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { notFound } from '../../../lib/errors';
import { findSuppression, liftSuppression, listSuppressions, SuppressionRow } from '../../../data/messaging/suppressions';
import { pageQueryFields, pageSchema, presentPage } from '../../http/pagination';
import { Instant, Nullable, SiteId } from '../../http/common-schemas';

const SuppressionSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  siteId: Type.String(),
  address: Type.String(),
  reason: Type.Union([Type.Literal('hard-bounce'), Type.Literal('complaint')]),
  detail: Nullable(Type.String()),
  logId: Nullable(Type.String()),
  createdAt: Instant,
  liftedAt: Nullable(Instant),
  liftedBy: Nullable(Type.String()),
});

export function presentSuppression(row: SuppressionRow) {
  return {
    id: row.id,
    siteId: row.site_id,
    address: row.address,
    reason: row.reason,
    detail: row.detail,
    logId: row.log_id === null ? null : String(row.log_id),
    createdAt: new Date(row.created_at).toISOString(),
    liftedAt: row.lifted_at ? new Date(row.lifted_at).toISOString() : null,
    liftedBy: row.lifted_by,
  };
}

/** Each site's suppression list: the addresses a hard bounce or a complaint took out of its sends (ADMIN). */
export function suppressionRoutes({ db }: AppDeps): AnyRoute[] {
  const ADMIN = access.roles('ADMIN');
  return [
    defineRoute({
      method: 'get',
      path: '/api/email/suppressions',
      tag: 'email',
      summary: "A site's suppression list, newest first: the entries in force (lifted=true: the lifted ones too)",
      access: ADMIN,
      query: Type.Object({ ...pageQueryFields, siteId: SiteId, lifted: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])) }),
      responses: { 200: { description: 'a page of entries', schema: pageSchema(SuppressionSchema) } },
      errors: [],
      handler: async (ctx, { query }) => {
        ctx.body = presentPage(await listSuppressions(db, { siteId: query.siteId, lifted: query.lifted === 'true', page: query }), presentSuppression);
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/email/suppressions/:id',
      tag: 'email',
      summary: 'Lift an entry: the address may be sent to again; the entry stays, with who lifted it and when',
      access: ADMIN,
      params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
      responses: { 200: { description: 'the lifted entry', schema: SuppressionSchema } },
      errors: ['NOT_FOUND'],
      handler: async (ctx, { params, identity }) => {
        const lifted = await liftSuppression(db, { id: params.id, by: identity.id });
        if (!lifted) {
          const entry = await findSuppression(db, params.id);
          throw notFound(entry ? `Suppression ${params.id} was lifted already.` : `No suppression ${params.id}.`);
        }
        ctx.body = presentSuppression(lifted);
      },
    }),
  ];
}
