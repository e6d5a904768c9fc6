import { Type } from '@sinclair/typebox';
import { AppDeps } from '../../deps';
import { Config } from '../../../lib/config';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { signToken } from '../../http/sign-token';
import { signInLimit } from '../../http/address-limit';
import { Instant } from '../../http/common-schemas';
import { notFound } from '../../../lib/errors';
import { findUser, listUsers } from '../../../data/directory/users';
import { presentUser } from './presenters';
import { UserSchema } from './schemas';

/** A development sign-in token lives this long: long enough for a session at the console, no longer. */
export const DEV_TOKEN_MINUTES = 60;
const SIGN_IN_CHOICES = 50;

const DevSignInBody = Type.Object({ userId: Type.String({ format: 'uuid' }) }, { additionalProperties: false });
const DevSignInSchema = Type.Object({ token: Type.String(), expiresAt: Instant, user: UserSchema });
const DevSignInChoicesSchema = Type.Object({ items: Type.Array(UserSchema) });

/**
 * Development sign-in for the console: pick one of the directory's users and get a short-lived token
 * signed with the development secret, carrying that user's roles and sites. Outside development (any
 * NODE_ENV but `development` and `test`) both routes answer 404, as if they did not exist: production
 * tokens come from the organisation's identity provider or are pasted.
 */
/**
 * Development sign-in is on in development without an identity provider: with one, only its tokens are
 * accepted, so a development token would be refused anyway.
 */
export const devSignInIsOn = (config: Pick<Config, 'production' | 'identity'>) => !config.production && !config.identity.jwksUrl;

export function devSignInRoutes({ db, config }: AppDeps): AnyRoute[] {
  const limitSignIns = signInLimit(config);
  const refuseOutsideDevelopment = () => {
    if (!devSignInIsOn(config)) throw notFound('Development sign-in is off: outside development, or where people sign in through the identity provider.');
  };
  return [
    defineRoute({
      method: 'get',
      path: '/api/directory/dev-sign-in',
      tag: 'directory',
      summary: 'Development only: the directory users one may sign in as (404 outside development)',
      access: access.public,
      responses: { 200: { description: 'users to sign in as', schema: DevSignInChoicesSchema } },
      errors: ['NOT_FOUND'],
      handler: async (ctx) => {
        refuseOutsideDevelopment();
        const page = await listUsers(db, { page: { limit: SIGN_IN_CHOICES } });
        ctx.body = { items: page.items.map(presentUser) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/directory/dev-sign-in',
      tag: 'directory',
      summary: `Development only: a token for one directory user, valid ${DEV_TOKEN_MINUTES} minutes (404 outside development)`,
      access: access.public,
      body: DevSignInBody,
      responses: { 200: { description: 'the token and who it is for', schema: DevSignInSchema } },
      errors: ['NOT_FOUND', 'RATE_LIMITED'],
      handler: async (ctx, { body }) => {
        refuseOutsideDevelopment();
        limitSignIns(ctx);
        const user = await findUser(db, body.userId);
        const expiresAt = new Date(Date.now() + DEV_TOKEN_MINUTES * 60_000);
        const token = await signToken({
          secret: config.identity.jwtSecret,
          claims: { sub: user.id, name: user.name, email: user.email, roles: user.roles, sites: user.site_ids },
          expiresIn: `${DEV_TOKEN_MINUTES}m`,
        });
        ctx.body = { token, expiresAt: expiresAt.toISOString(), user: presentUser(user) };
      },
    }),
  ];
}
