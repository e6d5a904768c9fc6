import { AppDeps } from '../../deps';
import { paginate, presentPage } from '../../http/pagination';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { notFound } from '../../../lib/errors';
import { uniqueOr409 } from '../../../data/db-errors';
import { UserRow, usersQuery, USERS_TABLE, USER_COLUMNS } from '../../../data/directory/users';
import { presentUser } from './presenters';
import { CreateUserBody, ListUsersQuery, UpdateUserBody, UserIdParams, UserPageSchema, UserSchema } from './schemas';

const EMAIL_TAKEN = 'USER_EMAIL_TAKEN';

/** The user directory: who exists, their roles, sites and locale; bulk sends read their recipients here. */
export function directoryRoutes({ db }: AppDeps): AnyRoute[] {
  const findUser = async (id: string): Promise<UserRow> => {
    const row = (await usersQuery(db).where({ id }).first()) as UserRow | undefined;
    if (!row) throw notFound(`No user ${id}.`);
    return row;
  };
  return [
    defineRoute({
      method: 'get',
      path: '/api/directory/users',
      tag: 'directory',
      summary: 'List users, newest first',
      access: access.roles('ADMIN'),
      query: ListUsersQuery,
      responses: { 200: { description: 'a page of users', schema: UserPageSchema } },
      handler: async (ctx, { query }) => {
        const page = await paginate<UserRow>({
          query: usersQuery(db, { siteId: query.siteId, role: query.role }),
          limit: query.limit,
          cursor: query.cursor,
          timeColumn: 'created_at',
          idColumn: 'id',
        });
        ctx.body = presentPage(page, presentUser);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/directory/users',
      tag: 'directory',
      summary: 'Create a user',
      access: access.roles('ADMIN'),
      body: CreateUserBody,
      responses: { 201: { description: 'created', schema: UserSchema } },
      handler: async (ctx, { body }) => {
        const [row] = (await uniqueOr409(
          () =>
            db(USERS_TABLE)
              .insert({
                email: body.email,
                phone: body.phone ?? null,
                name: body.name,
                locale: body.locale ?? 'en',
                roles: body.roles,
                site_ids: body.siteIds,
              })
              .returning(USER_COLUMNS),
          EMAIL_TAKEN,
          `A user with email ${body.email} exists.`,
        )) as UserRow[];
        ctx.status = 201;
        ctx.body = presentUser(row);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/directory/users/:id',
      tag: 'directory',
      summary: 'One user',
      access: access.roles('ADMIN'),
      params: UserIdParams,
      responses: { 200: { description: 'the user', schema: UserSchema } },
      handler: async (ctx, { params }) => {
        ctx.body = presentUser(await findUser(params.id));
      },
    }),
    defineRoute({
      method: 'put',
      path: '/api/directory/users/:id',
      tag: 'directory',
      summary: 'Change a user',
      access: access.roles('ADMIN'),
      params: UserIdParams,
      body: UpdateUserBody,
      responses: { 200: { description: 'the changed user', schema: UserSchema } },
      handler: async (ctx, { params, body }) => {
        await findUser(params.id);
        const changes: Record<string, unknown> = { updated_at: db.fn.now() };
        if (body.email !== undefined) changes.email = body.email;
        if (body.phone !== undefined) changes.phone = body.phone;
        if (body.name !== undefined) changes.name = body.name;
        if (body.locale !== undefined) changes.locale = body.locale;
        if (body.roles !== undefined) changes.roles = body.roles;
        if (body.siteIds !== undefined) changes.site_ids = body.siteIds;
        const [row] = (await uniqueOr409(
          () => db(USERS_TABLE).where({ id: params.id }).update(changes).returning(USER_COLUMNS),
          EMAIL_TAKEN,
          `A user with email ${body.email} exists.`,
        )) as UserRow[];
        ctx.body = presentUser(row);
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/directory/users/:id',
      tag: 'directory',
      summary: 'Remove a user',
      access: access.roles('ADMIN'),
      params: UserIdParams,
      responses: { 204: { description: 'removed' } },
      handler: async (ctx, { params }) => {
        const removed = await db(USERS_TABLE).where({ id: params.id }).delete();
        if (removed === 0) throw notFound(`No user ${params.id}.`);
        ctx.status = 204;
      },
    }),
  ];
}
