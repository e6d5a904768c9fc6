/**
 * Signing in through the organisation's identity provider: OpenID Connect's authorization code with PKCE.
 * The verifier and state wait in this tab's session storage while the person is at the provider; the code
 * that comes back is exchanged by the platform (`POST /api/directory/sign-in/token`), which hands back the
 * token only if it accepts it.
 */
const VERIFIER_KEY = 'opsflow.signIn.verifier';
const STATE_KEY = 'opsflow.signIn.state';

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
const randomText = () => base64url(crypto.getRandomValues(new Uint8Array(32)));

/** The console's own page: where the provider sends the person back (the platform exchanges codes for it only). */
export const redirectUri = () => `${window.location.origin}/console/`;

export async function goToProvider(provider: { authorizationEndpoint: string; clientId: string; scope: string }): Promise<void> {
  const verifier = randomText();
  const state = randomText();
  sessionStorage.setItem(VERIFIER_KEY, verifier);
  sessionStorage.setItem(STATE_KEY, state);
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  const url = new URL(provider.authorizationEndpoint);
  for (const [name, value] of Object.entries({
    response_type: 'code',
    client_id: provider.clientId,
    redirect_uri: redirectUri(),
    scope: provider.scope,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  })) {
    url.searchParams.set(name, value);
  }
  window.location.assign(url.toString());
}

/**
 * The code the provider sent back in this page's address, with the verifier kept for it, once: the address is
 * cleaned at once. A state that is not the one this tab sent (a link someone else made) gives nothing.
 */
export function takeReturnedCode(): { code: string; codeVerifier: string } | { refused: true } | null {
  const params = new URLSearchParams(window.location.search);
  const code = params.get('code');
  if (!code && !params.get('error')) return null;
  const expected = sessionStorage.getItem(STATE_KEY);
  const codeVerifier = sessionStorage.getItem(VERIFIER_KEY);
  sessionStorage.removeItem(STATE_KEY);
  sessionStorage.removeItem(VERIFIER_KEY);
  window.history.replaceState(null, '', window.location.pathname);
  if (!code || !expected || !codeVerifier || params.get('state') !== expected) return { refused: true };
  return { code, codeVerifier };
}
