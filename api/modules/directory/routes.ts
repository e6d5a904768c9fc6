import { AppDeps } from '../../deps';
import { presentPage } from '../../http/pagination';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { createUser, deleteUser, findUser, listUsers, updateUser } from '../../../data/directory/users';
import { presentUser } from './presenters';
import { CreateUserBody, ListUsersQuery, UpdateUserBody, UserIdParams, UserPageSchema, UserSchema } from './schemas';

/** The user directory: who exists, their roles, sites and locale; bulk sends read their recipients here. */
export function directoryRoutes({ db }: AppDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/directory/users',
      tag: 'directory',
      summary: 'List users, newest first',
      access: access.roles('ADMIN'),
      query: ListUsersQuery,
      responses: { 200: { description: 'a page of users', schema: UserPageSchema } },
      errors: [],
      handler: async (ctx, { query }) => {
        ctx.body = presentPage(await listUsers(db, { siteId: query.siteId, role: query.role, page: query }), presentUser);
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
      errors: ['USER_EMAIL_TAKEN'],
      handler: async (ctx, { body }) => {
        ctx.status = 201;
        ctx.body = presentUser(await createUser(db, body));
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
      errors: ['NOT_FOUND'],
      handler: async (ctx, { params }) => {
        ctx.body = presentUser(await findUser(db, params.id));
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
      errors: ['NOT_FOUND', 'USER_EMAIL_TAKEN'],
      handler: async (ctx, { params, body }) => {
        ctx.body = presentUser(await updateUser(db, params.id, body));
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
      errors: ['NOT_FOUND'],
      handler: async (ctx, { params }) => {
        await deleteUser(db, params.id);
        ctx.status = 204;
      },
    }),
  ];
}
