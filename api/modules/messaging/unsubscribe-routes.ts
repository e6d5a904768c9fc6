import { Type } from '@sinclair/typebox';
import { AppDeps } from '../../deps';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { PlatformError } from '../../../lib/errors';
import { secretKeysOf } from '../../../lib/secrets';
import { unsubscribeAddress } from '../../../data/messaging/suppressions';
import { readUnsubscribeToken } from '../../../adapters/messaging/unsubscribe-token';
import { linkKeysOf } from '../../../lib/link-keys';
import { retiredLinkKeys } from '../../../data/messaging/retired-link-keys';

// The longest token: a 128-character site id and a 254-character address, signed (about 560 characters).
const TokenParams = Type.Object({ token: Type.String({ minLength: 10, maxLength: 640, pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$' }) });

/** A page for whoever opens the link in a browser: a GET never unsubscribes (link scanners follow links), its button POSTs. */
const CONFIRM_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Unsubscribe</title></head>
<body><form method="post"><p>Stop receiving these emails?</p>
<input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form></body></html>
`;

/**
 * One-click unsubscribe (RFC 8058): the link in a bulk email's `List-Unsubscribe` header. A POST alone (the
 * mail client's, with `List-Unsubscribe=One-Click`, or the page's button) unsubscribes the address the
 * token names from its category in its site, with no sign-in; the token is signed, so it cannot be made up
 * or turned into another address's. Served outside /api/, at the platform's public address.
 */
export function unsubscribeRoutes({ db, config }: AppDeps): AnyRoute[] {
  const keys = secretKeysOf(config);
  const todays = [keys.current, keys.previous].flatMap((key) => (key ? [linkKeysOf(key)] : []));
  /** Today's keys first; the keys of SECRETS_KEYs rotated away only for a link none of those made. */
  const grantOf = async (token: string) => {
    const grant = readUnsubscribeToken(token, todays) ?? readUnsubscribeToken(token, await retiredLinkKeys(db, keys));
    if (!grant) throw new PlatformError('UNSUBSCRIBE_LINK_INVALID', 'This unsubscribe link is not one the platform made.');
    return grant;
  };
  return [
    defineRoute({
      method: 'post',
      path: '/u/:token',
      tag: 'email',
      summary: "Unsubscribe the link's address from its category of mail (RFC 8058 one-click: the body, if any, is not read)",
      access: access.public,
      params: TokenParams,
      responses: { 200: { description: 'unsubscribed', schema: Type.Object({ unsubscribed: Type.Literal(true), category: Type.String() }) } },
      errors: ['UNSUBSCRIBE_LINK_INVALID'],
      handler: async (ctx, { params }) => {
        const grant = await grantOf(params.token);
        await unsubscribeAddress(db, grant);
        ctx.body = { unsubscribed: true, category: grant.category };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/u/:token',
      tag: 'email',
      summary: 'The page of an unsubscribe link opened in a browser: a button that POSTs to it (a GET changes nothing)',
      access: access.public,
      params: TokenParams,
      responses: { 200: { description: 'the page', contentType: 'text/html' } },
      errors: ['UNSUBSCRIBE_LINK_INVALID'],
      handler: async (ctx, { params }) => {
        await grantOf(params.token);
        ctx.type = 'text/html; charset=utf-8';
        ctx.body = CONFIRM_PAGE;
      },
    }),
  ];
}
