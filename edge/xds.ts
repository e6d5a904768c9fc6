import { isIP } from 'node:net';
import { ErrorCatalogue, ErrorCode } from '../lib/errors';
import { EdgeInstance, EdgeService } from '../domain/deploy';

export type { EdgeInstance, EdgeService };

/**
 * What every part of the edge's configuration shares: the plan the control plane (the Koa API) writes from,
 * the names of its resources, and the small pieces of Envoy's JSON each part is made of. Envoy reads the
 * configuration as file-based xDS; `files.ts` writes it. Pure: these build objects.
 */

/** A certificate the edge serves over TLS, chosen by SNI: its chain and its key, in PEM. */
export interface EdgeCertificate {
  hostname: string;
  chainPem: string;
  keyPem: string;
  serial: string;
}

export interface EdgeJwt {
  /** HS256 user tokens signed with this secret. */
  hs256Secret: string;
  /**
   * RS256/ES256 tokens of an identity provider: its JWKS, issuer and audience, and the CA bundle its key
   * server's certificate must chain to (the system's, or JWT_JWKS_CA_FILE). With a provider, only its
   * tokens pass the edge.
   */
  jwks?: { url: string; issuer: string; audience: string; caFile: string };
}

export interface EdgePlan {
  /** Where the xDS files are: Envoy watches this folder. */
  dir: string;
  listen: EdgeInstance;
  /** The Koa API on its internal port: every reserved slug, and everything outside `/api/`. */
  api: EdgeInstance;
  reservedSlugs: readonly string[];
  services: EdgeService[];
  /** The platform's own hostnames: never a service's, whatever the registry says. */
  platformHostnames?: readonly string[];
  jwt: EdgeJwt;
  connectTimeoutMs: number;
  /** How long a connection to an instance may sit idle; there is no total timeout, so answers may stream. */
  idleTimeoutMs: number;
  /**
   * HTTPS: where it listens, and the certificates it serves there. There is no TLS listener without a
   * certificate. Plain HTTP redirects a hostname with a certificate to it, and answers ACME challenges.
   */
  tls?: { listen: EdgeInstance; certificates: EdgeCertificate[]; publicPort?: number };
  /** Where the edge's spans go; none: the edge makes no spans (it still passes a client's trace context on). */
  tracing?: EdgeTracing;
}

/** Where the edge sends its spans (OTEL_EXPORTER_OTLP_ENDPOINT, as the API and workers do), and the share of new traces it keeps. */
export interface EdgeTracing {
  /** The collector's base URL; spans go to `{endpoint}/v1/traces` over OTLP/HTTP. */
  endpoint: string;
  sampleRatio: number;
}

export const API_CLUSTER = 'opsflow_api';
/** The routes of plain HTTP and of HTTPS: the same services, but HTTP redirects names with a certificate. */
export const ROUTES = 'opsflow_routes';
export const TLS_ROUTES = 'opsflow_routes_tls';
export const clusterOf = (service: string) => `service_${service}`;
/** A rollout's new version: a cluster of its own, so Envoy counts its answers apart (names hold no `_`: no clash). */
export const canaryClusterOf = (service: string) => `canary_${service}`;

export const duration = (ms: number) => `${(ms / 1000).toFixed(3)}s`;
export const type = (name: string) => `type.googleapis.com/${name}`;
export const address = (at: EdgeInstance) => ({ socket_address: { address: at.host, port_value: at.port } });
export const base64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

/** A file of `dir` as an xDS source; a file renamed into place there is read again. */
export const watchedFile = (dir: string, file: string) => ({
  resource_api_version: 'V3',
  path_config_source: { path: `${dir}/${file}`, watched_directory: { path: dir } },
});

/** The problem+json body of a reply Envoy makes itself: the catalogue's, as the API would answer it. */
export function problem(code: ErrorCode, detail: string) {
  const { status, title } = ErrorCatalogue[code];
  return { type: `https://opsflow.dev/problems/${code.toLowerCase().replace(/_/g, '-')}`, title, status, detail, code };
}

export const setHeader = (key: string, value: string) => ({ header: { key, value }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' });
export const add = (key: string, value: string) => ({ append: setHeader(key, value) });

/**
 * TLS to an upstream outside the platform, verified: its certificate must chain to `caFile` and name the
 * host (the identity provider's key server, a trace collector). Without this Envoy takes any certificate,
 * and whoever answers for that host gets what the edge sends, or serves what it reads.
 */
export function verifiedUpstreamTls(host: string, caFile: string) {
  const bare = host.replace(/^\[|\]$/g, '');
  return {
    '@type': type('envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext'),
    // SNI carries host names only (RFC 6066).
    ...(isIP(bare) ? {} : { sni: bare }),
    common_tls_context: {
      validation_context: {
        trusted_ca: { filename: caFile },
        match_typed_subject_alt_names: [{ san_type: isIP(bare) ? 'IP_ADDRESS' : 'DNS', matcher: { exact: bare } }],
      },
    },
  };
}
