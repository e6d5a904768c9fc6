import { address, EdgeCertificate, EdgeInstance, EdgePlan, setHeader, type } from './xds';

/**
 * The edge's HTTPS: one listener, a filter chain per certificate chosen by the name the client asks for
 * (SNI), its certificate and key written in (the listeners' file is owner-only: it holds the token key too).
 * Not a file of its own per certificate (SDS): Envoy watches each such file with an inotify instance of its
 * own, Linux allows 128 a user by default, and past them Envoy aborts (#63). A renewed certificate changes
 * that one chain: Envoy drains the chain's open connections (each ends after its request in flight) and
 * leaves the others alone. Plain HTTP redirects names with a certificate here (308) and answers ACME's
 * HTTP-01 challenges.
 */

/** How long a browser keeps to HTTPS for a name once told (HSTS): a year, as browsers' preload lists ask. */
export const HSTS_MAX_AGE_SECONDS = 31536000;

/** Where the HTTP-01 challenges of an ACME server are asked (RFC 8555, section 8.3). */
export const ACME_CHALLENGE_PREFIX = '/.well-known/acme-challenge/';

/** The hostnames the edge holds a certificate for: HTTP redirects these, HTTPS tells browsers to stay (HSTS). */
export const certifiedHostnames = (plan: EdgePlan): Set<string> => new Set((plan.tls?.certificates ?? []).map((certificate) => certificate.hostname));

/** Added to every answer on HTTPS for a name with a certificate. */
export const hstsHeader = () => setHeader('strict-transport-security', `max-age=${HSTS_MAX_AGE_SECONDS}`);

/** Plain HTTP's answer for a name with a certificate: the same URL on HTTPS, 308 so a POST stays a POST. */
export function redirectToHttps(tls: { listen: EdgeInstance; publicPort?: number }) {
  // Always named: a Host header that carries plain HTTP's port must not carry it into the HTTPS URL.
  return { https_redirect: true, port_redirect: tls.publicPort ?? tls.listen.port, response_code: 'PERMANENT_REDIRECT' };
}

function transportSocket(certificate: EdgeCertificate) {
  return {
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': type('envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext'),
      common_tls_context: {
        tls_params: { tls_minimum_protocol_version: 'TLSv1_2' },
        alpn_protocols: ['h2', 'http/1.1'],
        tls_certificates: [{ certificate_chain: { inline_string: certificate.chainPem }, private_key: { inline_string: certificate.keyPem } }],
      },
    },
  };
}

/**
 * The HTTPS listener: a chain per certificate, matched on SNI. A client that names no hostname the edge
 * holds (or none at all) gets the platform's own certificate when there is one, and no handshake otherwise:
 * the edge never shows one service's certificate for another's name.
 */
export function tlsListener(plan: EdgePlan, tls: NonNullable<EdgePlan['tls']>, connections: { filters: unknown[] }) {
  const chainOf = (certificate: EdgeCertificate) => ({ ...connections, transport_socket: transportSocket(certificate) });
  const own = tls.certificates.find((certificate) => (plan.platformHostnames ?? []).includes(certificate.hostname));
  return {
    '@type': type('envoy.config.listener.v3.Listener'),
    name: 'opsflow_edge_tls',
    address: address(tls.listen),
    listener_filters: [
      {
        name: 'envoy.filters.listener.tls_inspector',
        typed_config: { '@type': type('envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector') },
      },
    ],
    filter_chains: tls.certificates.map((certificate) => ({
      name: certificate.hostname,
      filter_chain_match: { server_names: [certificate.hostname] },
      ...chainOf(certificate),
    })),
    ...(own ? { default_filter_chain: { name: 'platform', ...chainOf(own) } } : {}),
  };
}
