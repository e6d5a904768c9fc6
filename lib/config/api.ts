import { Env, integer, optional, port, text, url } from './read';

/** Where the API listens and how it is reached. */
export interface ApiConfig {
  /** The address the API listens on: loopback unless said otherwise (the container image says 0.0.0.0). */
  host: string;
  /** The platform's front door: where the edge (Envoy) listens, or the API itself when there is no edge. */
  port: number;
  /** Where the Koa API itself listens: behind the edge, API_PORT + 1 unless said; API_PORT without an edge. */
  listenPort: number;
  /** Where workers reach the API's internal endpoints (the archive sink). */
  internalUrl: string;
  /** Where people reach the platform: the links in the emails it sends (approval notices). */
  publicUrl: string;
}

export function apiConfig(env: Env): ApiConfig {
  const apiPort = port(env, 'API_PORT', 8080);
  const listenPort = port(env, 'API_LISTEN_PORT', optional(env, 'EDGE_DIR') ? apiPort + 1 : apiPort);
  return {
    host: text(env, 'API_HOST', '127.0.0.1'),
    port: apiPort,
    listenPort,
    internalUrl: (url(env, 'API_INTERNAL_URL', `http://127.0.0.1:${listenPort}`, ['http:', 'https:']) as string).replace(/\/+$/, ''),
    publicUrl: (url(env, 'PUBLIC_URL', `http://localhost:${apiPort}`, ['http:', 'https:']) as string).replace(/\/+$/, ''),
  };
}

/** The API's quotas and rate limits. */
export interface LimitsConfig {
  /** Bytes of files a site may store (archive files aside); an upload past it answers 413 QUOTA_EXCEEDED. */
  assetQuotaBytesPerSite: number;
  /** Email sends per user (a single or a bulk send counts once) within `sendRateWindowSeconds`; more answer 429. */
  sendRateLimit: number;
  sendRateWindowSeconds: number;
  /** Token-minting sign-ins (the code exchange, development sign-in) per client address within `signInRateWindowSeconds`; more answer 429. */
  signInRateLimit: number;
  signInRateWindowSeconds: number;
}

export function limitsConfig(env: Env): LimitsConfig {
  return {
    assetQuotaBytesPerSite: integer(env, 'ASSET_QUOTA_BYTES_PER_SITE', 10 * 1024 ** 3, 0, Number.MAX_SAFE_INTEGER),
    sendRateLimit: integer(env, 'SEND_RATE_LIMIT', 10, 1, 1_000_000),
    sendRateWindowSeconds: integer(env, 'SEND_RATE_WINDOW_SECONDS', 60, 1, 86400),
    signInRateLimit: integer(env, 'SIGN_IN_RATE_LIMIT', 30, 1, 1_000_000),
    signInRateWindowSeconds: integer(env, 'SIGN_IN_RATE_WINDOW_SECONDS', 60, 1, 86400),
  };
}
