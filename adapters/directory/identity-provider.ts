import { unavailable } from '../../lib/errors';
import { guardedFetch, OutboundPolicy, readCapped } from '../messaging/outbound';

/** Where the console sends a person to sign in, and where the code it brings back is exchanged. */
interface ProviderEndpoints {
  authorizationEndpoint: string;
  tokenEndpoint: string;
}

const DISCOVERY_KEPT_MS = 10 * 60 * 1000;
const ANSWER_LIMIT_BYTES = 64 * 1024;
const TIMEOUT_MS = 5000;

/**
 * The organisation's OpenID Connect provider as the platform talks to it: discovery (kept ten minutes) and
 * the authorization-code exchange. Every call goes through the outbound guard and is bounded in time and size.
 */
export function identityProviderClient(args: { issuer: string; clientId: string; policy: OutboundPolicy }) {
  let discovered: { endpoints: ProviderEndpoints; until: number } | null = null;

  const fetchJson = async (url: string, init: RequestInit): Promise<{ status: number; body: Record<string, unknown> }> => {
    let status: number;
    let text: string;
    try {
      const answer = await guardedFetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(TIMEOUT_MS) }, args.policy);
      status = answer.status;
      text = await readCapped(answer.body, ANSWER_LIMIT_BYTES);
    } catch {
      throw unavailable('IDENTITY_PROVIDER_UNAVAILABLE', 'The identity provider did not answer.');
    }
    // An answer that is not JSON is still an answer (a refusal page, say): it names no endpoint and no token.
    const body = (() => {
      try {
        const parsed: unknown = JSON.parse(text);
        return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
      } catch {
        return {};
      }
    })();
    return { status, body };
  };

  const endpoints = async (): Promise<ProviderEndpoints> => {
    if (discovered && Date.now() < discovered.until) return discovered.endpoints;
    const { status, body } = await fetchJson(`${args.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`, {});
    const authorizationEndpoint = body.authorization_endpoint;
    const tokenEndpoint = body.token_endpoint;
    // The document must be the issuer's own, naming both endpoints over http(s).
    if (
      status !== 200 ||
      body.issuer !== args.issuer ||
      typeof authorizationEndpoint !== 'string' ||
      typeof tokenEndpoint !== 'string' ||
      ![authorizationEndpoint, tokenEndpoint].every((url) => /^https?:\/\//.test(url))
    ) {
      throw unavailable('IDENTITY_PROVIDER_UNAVAILABLE', "The identity provider's discovery document is not usable.");
    }
    discovered = { endpoints: { authorizationEndpoint, tokenEndpoint }, until: Date.now() + DISCOVERY_KEPT_MS };
    return discovered.endpoints;
  };

  /** The access token for an authorization code (PKCE), or null when the provider refuses the code. */
  const exchangeCode = async (grant: { code: string; codeVerifier: string; redirectUri: string }): Promise<string | null> => {
    const { tokenEndpoint } = await endpoints();
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      code: grant.code,
      code_verifier: grant.codeVerifier,
      redirect_uri: grant.redirectUri,
      client_id: args.clientId,
    });
    const { status, body } = await fetchJson(tokenEndpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
    });
    if (status >= 500) throw unavailable('IDENTITY_PROVIDER_UNAVAILABLE', `The identity provider answered ${status}.`);
    return status === 200 && typeof body.access_token === 'string' ? body.access_token : null;
  };

  return { endpoints, exchangeCode };
}
