import crypto from 'node:crypto';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, KeyLike, SignJWT } from 'jose';

/** A person the identity provider knows, with the claims it puts in their access token. */
export interface ProviderUser {
  sub: string;
  name: string;
  email: string;
  roles: string[];
  sites: string[];
}

export interface IdentityProvider {
  issuer: string;
  jwksUrl: string;
  audience: string;
  clientId: string;
  /** Every token request the provider answered, as it was sent (the console's exchange goes through the API). */
  tokenRequests: URLSearchParams[];
  /** The next tokens name this audience instead of the platform's (a token meant for another application). */
  issueForAudience(audience: string | null): void;
  /** A token signed with the provider's key for a user, with extra claims and header fields (an ID token's, say). */
  signFor(user: ProviderUser, extra?: { claims?: Record<string, unknown>; typ?: string }): Promise<string>;
  close(): Promise<void>;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
const base64url = (bytes: Buffer) => bytes.toString('base64url');

/**
 * A real OpenID Connect provider on loopback, small but strict where the console's sign-in depends on it:
 * discovery, an authorization page with a sign-in form (authorization code with PKCE S256 only, the
 * registered redirect URI only), single-use codes, RS256 access tokens with the platform's claims, a JWKS.
 */
export async function startIdentityProvider(args: {
  users: ProviderUser[];
  clientId?: string;
  audience?: string;
  redirectUri: (issuer: string) => string | null;
}): Promise<IdentityProvider> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'test-key-1', alg: 'RS256', use: 'sig' };
  const clientId = args.clientId ?? 'opsflow-console';
  const audience = args.audience ?? 'opsflow';
  let tokenAudience: string | null = null;
  const codes = new Map<string, { challenge: string; user: ProviderUser; redirectUri: string }>();
  const tokenRequests: URLSearchParams[] = [];
  let issuer = '';

  const signFor = (user: ProviderUser, key: KeyLike, extra: { claims?: Record<string, unknown>; typ?: string } = {}) =>
    new SignJWT({ name: user.name, email: user.email, roles: user.roles, sites: user.sites, ...extra.claims })
      .setProtectedHeader({ alg: 'RS256', kid: jwk.kid, ...(extra.typ ? { typ: extra.typ } : {}) })
      .setIssuer(issuer)
      .setAudience(tokenAudience ?? audience)
      .setSubject(user.sub)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(key);

  const readBody = (request: http.IncomingMessage) =>
    new Promise<URLSearchParams>((resolve) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => resolve(new URLSearchParams(body)));
    });
  const json = (response: http.ServerResponse, status: number, body: unknown) =>
    response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));

  const server = http.createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', issuer);
    if (request.method === 'GET' && url.pathname === '/.well-known/openid-configuration') {
      return json(response, 200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        code_challenge_methods_supported: ['S256'],
      });
    }
    if (request.method === 'GET' && url.pathname === '/jwks') return json(response, 200, { keys: [jwk] });
    if (url.pathname === '/authorize') {
      const params = request.method === 'POST' ? await readBody(request) : url.searchParams;
      const redirectUri = params.get('redirect_uri') ?? '';
      if (
        params.get('client_id') !== clientId ||
        redirectUri !== args.redirectUri(issuer) ||
        params.get('response_type') !== 'code' ||
        params.get('code_challenge_method') !== 'S256' ||
        !params.get('code_challenge')
      ) {
        return response.writeHead(400, { 'content-type': 'text/plain' }).end('invalid authorization request');
      }
      if (request.method === 'GET') {
        const hidden = [...params].map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`).join('');
        const choices = args.users
          .map((user, index) => `<label><input type="radio" name="user" value="${index}"${index === 0 ? ' checked' : ''}> ${escapeHtml(user.name)}</label>`)
          .join('<br>');
        return response
          .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
          .end(
            `<!doctype html><html lang="en"><title>Example identity provider</title><h1>Example identity provider</h1><form method="post">${hidden}${choices}<br><button>Sign in</button></form></html>`,
          );
      }
      const user = args.users[Number(params.get('user'))];
      const code = base64url(crypto.randomBytes(24));
      codes.set(code, { challenge: params.get('code_challenge')!, user, redirectUri });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      if (params.get('state')) back.searchParams.set('state', params.get('state')!);
      return response.writeHead(302, { location: back.toString() }).end();
    }
    if (request.method === 'POST' && url.pathname === '/token') {
      const form = await readBody(request);
      tokenRequests.push(form);
      const code = form.get('code') ?? '';
      const granted = codes.get(code);
      // A code is good once, for the client, redirect URI and PKCE verifier it was issued to.
      codes.delete(code);
      const verifier = form.get('code_verifier') ?? '';
      if (
        form.get('grant_type') !== 'authorization_code' ||
        !granted ||
        form.get('client_id') !== clientId ||
        form.get('redirect_uri') !== granted.redirectUri ||
        base64url(crypto.createHash('sha256').update(verifier).digest()) !== granted.challenge
      ) {
        return json(response, 400, { error: 'invalid_grant' });
      }
      return json(response, 200, { access_token: await signFor(granted.user, privateKey), token_type: 'Bearer', expires_in: 600 });
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    audience,
    clientId,
    tokenRequests,
    issueForAudience: (other) => (tokenAudience = other),
    signFor: (user, extra) => signFor(user, privateKey, extra),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
