import { AppDeps } from '../../deps';
import { access, AnyRoute } from '../../http/route';
import { resourceRoutes } from '../../http/resource-routes';
import { createUser, deleteUser, findUser, listUsers, updateUser } from '../../../data/directory/users';
import { presentUser } from './presenters';
import { CreateUserBody, ListUsersQuery, UpdateUserBody, UserIdParams, UserPageSchema, UserSchema } from './schemas';

/** The user directory: who exists, their roles, sites and locale; bulk sends read their recipients here. */
export function directoryRoutes({ db }: AppDeps): AnyRoute[] {
  return resourceRoutes({
    path: '/api/directory/users',
    tag: 'directory',
    noun: { one: 'user', many: 'users' },
    access: access.roles('ADMIN'),
    summaries: { list: 'List users, newest first', create: 'Create a user', read: 'One user', update: 'Change a user', remove: 'Remove a user' },
    schemas: { listQuery: ListUsersQuery, page: UserPageSchema, item: UserSchema, create: CreateUserBody, update: UpdateUserBody, idParams: UserIdParams },
    errors: { create: ['USER_EMAIL_TAKEN'], update: ['USER_EMAIL_TAKEN'] },
    db,
    data: {
      list: (db, query) => listUsers(db, { siteId: query.siteId, role: query.role, page: query }),
      create: createUser,
      read: findUser,
      update: updateUser,
      remove: deleteUser,
    },
    present: presentUser,
  });
}
