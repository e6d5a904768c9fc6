import fs from 'node:fs';
import { ConfigError, Env, optional, secret, text, url } from './read';

/** Who may call the platform: its own token secret, and the identity provider whose tokens it accepts. */
export interface IdentityConfig {
  jwtSecret: string;
  jwksUrl: string | null;
  /** The CA bundle the edge verifies the JWKS server's certificate against (JWT_JWKS_CA_FILE, else the system's). */
  jwksCaFile: string;
  issuer: string | null;
  audience: string | null;
  /** The console's client id at the identity provider (JWT_ISSUER): its "sign in with your organisation" button; null without one. */
  oidcClientId: string | null;
  oidcScope: string;
}

/** The platform's own secrets: the token between its processes and the key of what it keeps encrypted. */
export interface SecretsConfig {
  internalToken: string;
  key: string;
  /** The key before SECRETS_KEY during a rotation: it still decrypts until `npm run secrets:rotate` has re-encrypted everything. */
  previousKey: string | null;
}

/** Debian's bundle of the system's trusted CAs (package ca-certificates). */
const SYSTEM_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

/**
 * With a JWKS (an identity provider's keys), tokens must name that provider and this platform: an issuer
 * and an audience are required, and outside development the keys come over https only.
 */
function jwksSettings(env: Env, production: boolean): Omit<IdentityConfig, 'jwtSecret'> {
  const jwksUrl = url(env, 'JWT_JWKS_URL', null, production ? ['https:'] : ['https:', 'http:']);
  const issuer = optional(env, 'JWT_ISSUER');
  const audience = optional(env, 'JWT_AUDIENCE');
  if (jwksUrl && !issuer) throw new ConfigError('JWT_ISSUER', 'is required with JWT_JWKS_URL (the issuer tokens must name)');
  if (jwksUrl && !audience) throw new ConfigError('JWT_AUDIENCE', 'is required with JWT_JWKS_URL (the audience tokens must name)');
  const oidcClientId = optional(env, 'OIDC_CLIENT_ID');
  if (oidcClientId && !jwksUrl)
    throw new ConfigError('OIDC_CLIENT_ID', 'needs JWT_JWKS_URL, JWT_ISSUER and JWT_AUDIENCE (the provider whose tokens the platform accepts)');
  // An ID token names the console's client as its audience: were that JWT_AUDIENCE, the edge (which cannot
  // look at a token's type) would take an ID token for an access token.
  if (oidcClientId && oidcClientId === audience)
    throw new ConfigError('JWT_AUDIENCE', 'must differ from OIDC_CLIENT_ID: ID tokens name the client as their audience, and would pass for access tokens');
  const jwksCaFile = text(env, 'JWT_JWKS_CA_FILE', SYSTEM_CA_BUNDLE);
  if ((env.JWT_JWKS_CA_FILE || jwksUrl?.startsWith('https:')) && !fs.existsSync(jwksCaFile)) {
    throw new ConfigError('JWT_JWKS_CA_FILE', `no such file: ${jwksCaFile} (the CA bundle the edge verifies the JWKS server against)`);
  }
  return { jwksUrl, jwksCaFile, issuer, audience, oidcClientId, oidcScope: optional(env, 'OIDC_SCOPE') ?? 'openid profile email' };
}

export function identityConfig(env: Env, production: boolean): IdentityConfig {
  return { jwtSecret: secret(env, 'JWT_SECRET', production, 16), ...jwksSettings(env, production) };
}

export function secretsConfig(env: Env, production: boolean): SecretsConfig {
  return {
    internalToken: secret(env, 'INTERNAL_TOKEN', production, 16),
    key: secret(env, 'SECRETS_KEY', production, 16),
    previousKey: optional(env, 'SECRETS_KEY_PREVIOUS'),
  };
}
