import { access, defineRoute } from './route';

/**
 * A route's access types its handler's caller: `npm run typecheck` compiles this file, so a handler that
 * may meet no user yet reads one fails the check (each `@ts-expect-error` below must find its error).
 */
const respond = { 200: { description: 'ok' } };

const forUsers = defineRoute({
  method: 'get',
  path: '/probe/user',
  tag: 'probe',
  summary: 'probe',
  access: access.user,
  responses: respond,
  errors: [],
  handler: async (_ctx, { identity }) => {
    const id: string = identity.id;
    void id;
  },
});

const forRoles = defineRoute({
  method: 'get',
  path: '/probe/roles',
  tag: 'probe',
  summary: 'probe',
  access: access.roles('ADMIN'),
  responses: respond,
  errors: [],
  handler: async (_ctx, { identity }) => {
    const roles: string[] = identity.roles;
    void roles;
  },
});

const forEveryone = defineRoute({
  method: 'get',
  path: '/probe/public',
  tag: 'probe',
  summary: 'probe',
  access: access.public,
  responses: respond,
  errors: [],
  handler: async (_ctx, { identity }) => {
    // @ts-expect-error a public route has no user
    void identity.id;
  },
});

const forRolesOrTheInternalToken = defineRoute({
  method: 'get',
  path: '/probe/either',
  tag: 'probe',
  summary: 'probe',
  access: access.rolesOrInternal('ADMIN'),
  responses: respond,
  errors: [],
  handler: async (_ctx, { identity }) => {
    // @ts-expect-error the internal token brings no user
    void identity.id;
  },
});

test('routes of every access are routes alike (the type checks above are the test)', () => {
  expect([forUsers, forRoles, forEveryone, forRolesOrTheInternalToken].map((route) => route.access.kind)).toEqual([
    'user',
    'roles',
    'public',
    'roles-or-internal',
  ]);
});
