import { Static, TObject, TSchema, TString } from '@sinclair/typebox';
import { Db } from '../../data/db';
import { ErrorCode } from '../../lib/errors';
import { Identity } from './identity';
import { Page, presentPage } from './pagination';
import { Access, AnyRoute, defineRoute } from './route';

/**
 * The five routes of a plain resource kept in one table: list (a page), create, read, replace and delete
 * by id. Directory users, archive policies and approval policies share this shape; what differs (names,
 * schemas, codes, the repository's functions) is named once per resource, so a change to the shape (a
 * status, a header, a new error every such route may answer) is made in one place.
 */
export interface ResourceRoutes<Row, ListQuery extends TObject, CreateBody extends TSchema, UpdateBody extends TSchema> {
  /** The collection's path; one item is at `${path}/:id`. */
  path: string;
  tag: string;
  /** What one item and many are called in the answers' descriptions: `user`, `users`. */
  noun: { one: string; many: string };
  access: Access<Identity>;
  summaries: { list: string; create: string; read: string; update: string; remove: string };
  schemas: { listQuery: ListQuery; page: TSchema; item: TSchema; create: CreateBody; update: UpdateBody; idParams: TObject<{ id: TString }> };
  /** The codes beyond NOT_FOUND (read, update, delete) that creating and replacing may answer. */
  errors: { create: readonly ErrorCode[]; update: readonly ErrorCode[] };
  db: Db;
  /** The table's repository (in data/): each function takes the database first. */
  data: {
    list(db: Db, query: Static<ListQuery>): Promise<Page<Row>>;
    /** `identity`: who asks, for a repository that records it. */
    create(db: Db, body: Static<CreateBody>, identity: Identity): Promise<Row>;
    read(db: Db, id: string): Promise<Row>;
    update(db: Db, id: string, body: Static<UpdateBody>, identity: Identity): Promise<Row>;
    remove(db: Db, id: string): Promise<void>;
  };
  present(row: Row): unknown;
}

export function resourceRoutes<Row, ListQuery extends TObject, CreateBody extends TSchema, UpdateBody extends TSchema>(
  resource: ResourceRoutes<Row, ListQuery, CreateBody, UpdateBody>,
): AnyRoute[] {
  const { path, tag, noun, access, summaries, schemas, db, data, present } = resource;
  const itemPath = `${path}/:id`;
  return [
    defineRoute({
      method: 'get',
      path,
      tag,
      summary: summaries.list,
      access,
      query: schemas.listQuery,
      responses: { 200: { description: `a page of ${noun.many}`, schema: schemas.page } },
      errors: [],
      handler: async (ctx, { query }) => {
        ctx.body = presentPage(await data.list(db, query), present);
      },
    }),
    defineRoute({
      method: 'post',
      path,
      tag,
      summary: summaries.create,
      access,
      body: schemas.create,
      responses: { 201: { description: 'created', schema: schemas.item } },
      errors: resource.errors.create,
      handler: async (ctx, { body, identity }) => {
        const row = await data.create(db, body, identity);
        ctx.status = 201;
        ctx.body = present(row);
      },
    }),
    defineRoute({
      method: 'get',
      path: itemPath,
      tag,
      summary: summaries.read,
      access,
      params: schemas.idParams,
      responses: { 200: { description: `the ${noun.one}`, schema: schemas.item } },
      errors: ['NOT_FOUND'],
      handler: async (ctx, { params }) => {
        ctx.body = present(await data.read(db, params.id));
      },
    }),
    defineRoute({
      method: 'put',
      path: itemPath,
      tag,
      summary: summaries.update,
      access,
      params: schemas.idParams,
      body: schemas.update,
      responses: { 200: { description: `the changed ${noun.one}`, schema: schemas.item } },
      errors: ['NOT_FOUND', ...resource.errors.update],
      handler: async (ctx, { params, body, identity }) => {
        ctx.body = present(await data.update(db, params.id, body, identity));
      },
    }),
    defineRoute({
      method: 'delete',
      path: itemPath,
      tag,
      summary: summaries.remove,
      access,
      params: schemas.idParams,
      responses: { 204: { description: 'deleted' } },
      errors: ['NOT_FOUND'],
      handler: async (ctx, { params }) => {
        await data.remove(db, params.id);
        ctx.status = 204;
      },
    }),
  ];
}
