import { isIP } from 'node:net';
import { ErrorCatalogue, ErrorCode } from '../lib/errors';
import { edgeAccessLogs } from './access-log';
import { CLAIMS_KEY, IDENTITY_FORMATTERS, identityHeaderMutations, requestIdCheck } from './identity';
import { tlsListener } from './tls';
import { collectorCluster, edgeTracing } from './tracing';
import {
  add,
  address,
  API_CLUSTER,
  base64url,
  canaryClusterOf,
  clusterOf,
  duration,
  EdgeInstance,
  EdgeJwt,
  EdgePlan,
  EdgeService,
  problem,
  ROUTES,
  TLS_ROUTES,
  type,
  verifiedUpstreamTls,
  watchedFile,
} from './xds';

/**
 * The edge's listeners, clusters and bootstrap (its routes are `routes.ts`, its TLS `tls.ts`): what the
 * control plane (the Koa API) writes for Envoy, the data plane, from the service registry. Envoy reads them
 * as file-based xDS; each service's cluster carries its instances, so a change of instances changes that
 * cluster, not a listener. Pure: these functions build objects; `files.ts` writes them.
 */

/** Below Node's own keep-alive timeout (5 s), which the API keeps. */
const API_IDLE_CLOSE_MS = 3000;
const LISTENER = 'opsflow_edge';

/**
 * After jwt_authn, on a service's route: every `X-User-*`, `Forwarded`, `X-Forwarded-*` and `X-Real-IP` a
 * client sent is removed, where the request came from is stated as the edge sees the connection, and the
 * caller's `X-User-*` are set from the verified token (`identity.ts`).
 */
const serviceHeaders = (scheme: 'http' | 'https') => ({
  name: 'envoy.filters.http.header_mutation',
  typed_config: {
    '@type': type('envoy.extensions.filters.http.header_mutation.v3.HeaderMutation'),
    mutations: {
      request_mutations: [
        ...identityHeaderMutations(),
        { remove_on_match: { key_matcher: { prefix: 'x-forwarded-' } } },
        { remove: 'forwarded' },
        { remove: 'x-real-ip' },
        add('x-forwarded-for', '%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%'),
        add('x-real-ip', '%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%'),
        add('x-forwarded-proto', scheme),
        add('x-forwarded-host', '%REQ(:AUTHORITY)%'),
        add('forwarded', `for=%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%;proto=${scheme};host="%REQ(:AUTHORITY)%"`),
      ],
      formatters: IDENTITY_FORMATTERS,
    },
  },
});

function jwtFilter(jwt: EdgeJwt) {
  const common = {
    // The token is taken from Authorization and not passed on: services see X-User-* only.
    forward: false,
    require_expiration: true,
    payload_in_metadata: CLAIMS_KEY,
    clock_skew_seconds: 30,
    // A client sends the same token with every request: one verified a moment ago is not verified again
    // (its expiry is still checked).
    jwt_cache_config: { jwt_cache_size: 1000 },
  };
  const providers: Record<string, unknown> = {};
  // The platform's HS256 tokens name no issuer or audience: once an identity provider is configured, the
  // API refuses them, and so does the edge (they are not even configured).
  if (!jwt.jwks) {
    providers.platform = {
      ...common,
      local_jwks: { inline_string: JSON.stringify({ keys: [{ kty: 'oct', alg: 'HS256', k: base64url(jwt.hs256Secret) }] }) },
    };
  } else {
    providers.identity_provider = {
      ...common,
      issuer: jwt.jwks.issuer,
      audiences: [jwt.jwks.audience],
      remote_jwks: {
        http_uri: { uri: jwt.jwks.url, cluster: 'jwks', timeout: '5s' },
        cache_duration: '600s',
        async_fetch: { fast_listener: false },
      },
    };
  }
  const anyProvider = { provider_name: jwt.jwks ? 'identity_provider' : 'platform' };
  return {
    name: 'envoy.filters.http.jwt_authn',
    typed_config: {
      '@type': type('envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication'),
      providers,
      requirement_map: { user: anyProvider },
    },
  };
}

/** Replies Envoy makes itself, as problem+json: no healthy instance (503), a token refused at the edge (401). */
function localReplies() {
  const mapper = (code: ErrorCode, detail: string, filter: Record<string, unknown>) => ({
    filter,
    status_code: ErrorCatalogue[code].status,
    body_format_override: { json_format: problem(code, detail), content_type: 'application/problem+json' },
  });
  return {
    mappers: [
      mapper('SERVICE_UNAVAILABLE', 'The service has no healthy instance.', {
        response_flag_filter: { flags: ['UH', 'UF', 'NR'] },
      }),
      // A service's first instance: its route may name its cluster a moment before Envoy has checked it.
      mapper('SERVICE_UNAVAILABLE', 'The service is being connected at the edge; try again in a moment.', {
        response_flag_filter: { flags: ['NC'] },
      }),
      // The instance took the request and dropped its connection before answering (not tried again with a body).
      mapper('BAD_GATEWAY', 'The service did not answer.', {
        response_flag_filter: { flags: ['UC', 'UPE'] },
      }),
      mapper('UNAUTHENTICATED', 'A valid bearer token is required.', {
        status_code_filter: { comparison: { op: 'EQ', value: { default_value: 401, runtime_key: 'edge_unauthenticated' } } },
      }),
    ],
  };
}

/** The HTTP connection manager of a listener: plain HTTP's, or HTTPS's (its own routes, and `https` told onward). */
function connectionManager(plan: EdgePlan, scheme: 'http' | 'https') {
  return {
    '@type': type('envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager'),
    stat_prefix: scheme === 'http' ? 'edge' : 'edge_tls',
    generate_request_id: true,
    // A client's own request id is kept when well formed, so its logs and the platform's can be joined on it;
    // a malformed one is removed first, and Envoy makes one.
    preserve_external_request_id: true,
    early_header_mutation_extensions: [requestIdCheck()],
    // Envoy would otherwise rewrite one character of a client's UUID to carry a tracing decision.
    request_id_extension: { typed_config: { '@type': type('envoy.extensions.request_id.uuid.v3.UuidRequestIdConfig'), pack_trace_reason: false } },
    // The edge is where clients connect: Envoy's own x-envoy-* headers from a client are not trusted.
    use_remote_address: true,
    // A client's X_User_Id must not reach anyone as X-User-Id.
    common_http_protocol_options: { headers_with_underscores_action: 'DROP_HEADER' },
    upgrade_configs: [{ upgrade_type: 'websocket' }],
    rds:
      scheme === 'http'
        ? { route_config_name: ROUTES, config_source: watchedFile(plan.dir, 'rds.json') }
        : { route_config_name: TLS_ROUTES, config_source: watchedFile(plan.dir, 'rds-tls.json') },
    local_reply_config: localReplies(),
    ...(plan.tracing ? { tracing: edgeTracing(plan.tracing) } : {}),
    // An unsubscribe link's token unsubscribes its address with no sign-in: its line names the path's shape only.
    access_log: edgeAccessLogs(),
    http_filters: [
      jwtFilter(plan.jwt),
      serviceHeaders(scheme),
      { name: 'envoy.filters.http.router', typed_config: { '@type': type('envoy.extensions.filters.http.router.v3.Router') } },
    ],
  };
}

/** Plain HTTP on the front door; HTTPS beside it once the edge holds a certificate. */
export function edgeListeners(plan: EdgePlan) {
  const httpConnections = (scheme: 'http' | 'https') => ({
    filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: connectionManager(plan, scheme) }],
  });
  const plain = {
    '@type': type('envoy.config.listener.v3.Listener'),
    name: LISTENER,
    address: address(plan.listen),
    filter_chains: [httpConnections('http')],
  };
  const secure = plan.tls && plan.tls.certificates.length > 0 ? tlsListener(plan, plan.tls, httpConnections('https')) : null;
  return { resources: secure ? [plain, secure] : [plain] };
}

/**
 * The API cluster when the API is a name (compose's opsflow-api): looked up each second, IPv4 only, and never
 * under the host's search domains, so that while the API's container is gone the name cannot be answered by
 * some `opsflow-api.<search domain>` outside, which would then receive every request with its token.
 */
const apiByName = {
  type: 'STRICT_DNS',
  dns_refresh_rate: '1s',
  dns_lookup_family: 'V4_ONLY',
  typed_dns_resolver_config: {
    name: 'envoy.network.dns_resolver.cares',
    typed_config: {
      '@type': type('envoy.extensions.network.dns_resolver.cares.v3.CaresDnsResolverConfig'),
      dns_resolver_options: { no_default_search_domain: true },
    },
  },
};

/**
 * The clusters: the API, and one per service with its instances written in. Not a file of endpoints per
 * service (EDS): Envoy watches each such file with an inotify instance of its own, Linux allows 128 a user
 * by default, and past them Envoy aborts (#63, at about 120 services). A service whose instances change is
 * a changed cluster: Envoy builds it anew beside the old one, checks the health of its hosts once, then
 * swaps it in; the old one's requests in flight finish. Other clusters are left as they are.
 */
export function edgeClusters(plan: EdgePlan) {
  const serviceCluster = (service: EdgeService, version: 'current' | 'canary', name = clusterNameOf(service, version)) => ({
    '@type': type('envoy.config.cluster.v3.Cluster'),
    name,
    type: 'STATIC',
    load_assignment: endpointsOf(name, instancesOf(service, version)),
    connect_timeout: duration(plan.connectTimeoutMs),
    lb_policy: 'ROUND_ROBIN',
    // With no instance healthy, answer 503 rather than spread traffic over unhealthy ones.
    common_lb_config: { healthy_panic_threshold: { value: 0 } },
    health_checks: [
      {
        timeout: '1s',
        interval: '1s',
        no_traffic_interval: '2s',
        unhealthy_threshold: 2,
        healthy_threshold: 1,
        http_health_check: { path: version === 'canary' && service.canary ? service.canary.healthPath : service.healthPath },
      },
    ],
    outlier_detection: { consecutive_gateway_failure: 3, consecutive_5xx: 5, interval: '2s', base_ejection_time: '10s' },
  });
  const resources: Record<string, unknown>[] = [
    {
      '@type': type('envoy.config.cluster.v3.Cluster'),
      name: API_CLUSTER,
      // Compose names the API (opsflow-api): a name is looked up, again each second, so a new API container
      // (an upgrade) is found at its new address. Envoy refuses a name in a STATIC cluster.
      ...(isIP(plan.api.host) ? { type: 'STATIC' } : apiByName),
      connect_timeout: duration(plan.connectTimeoutMs),
      // Envoy lets go of an idle connection to the API before the API does (Node closes one after 5 s idle), so
      // a request is never written to a connection the API is closing (a fresh-clone run, 2026-11-27: 502).
      typed_extension_protocol_options: {
        'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
          '@type': type('envoy.extensions.upstreams.http.v3.HttpProtocolOptions'),
          common_http_protocol_options: { idle_timeout: duration(API_IDLE_CLOSE_MS) },
          explicit_http_config: { http_protocol_options: {} },
        },
      },
      load_assignment: { cluster_name: API_CLUSTER, endpoints: [{ lb_endpoints: [{ endpoint: { address: address(plan.api) } }] }] },
    },
    ...plan.services.filter((service) => service.instances.length > 0).map((service) => serviceCluster(service, 'current')),
    ...plan.services.filter((service) => (service.canary?.instances.length ?? 0) > 0).map((service) => serviceCluster(service, 'canary')),
    ...(plan.tracing ? [collectorCluster(plan.tracing)] : []),
  ];
  if (plan.jwt.jwks) {
    const url = new URL(plan.jwt.jwks.url);
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    resources.push({
      '@type': type('envoy.config.cluster.v3.Cluster'),
      name: 'jwks',
      type: 'STRICT_DNS',
      connect_timeout: '5s',
      load_assignment: { cluster_name: 'jwks', endpoints: [{ lb_endpoints: [{ endpoint: { address: address({ host: url.hostname, port }) } }] }] },
      ...(url.protocol === 'https:'
        ? { transport_socket: { name: 'envoy.transport_sockets.tls', typed_config: verifiedUpstreamTls(url.hostname, plan.jwt.jwks.caFile) } }
        : {}),
    });
  }
  return { resources };
}

const clusterNameOf = (service: EdgeService, version: 'current' | 'canary') =>
  version === 'current' ? clusterOf(service.name) : canaryClusterOf(service.name);
const instancesOf = (service: EdgeService, version: 'current' | 'canary') => (version === 'current' ? service.instances : (service.canary?.instances ?? []));

/** One cluster's endpoints: every instance registered to it, for the health checks to judge. */
function endpointsOf(cluster: string, instances: EdgeInstance[]) {
  return { cluster_name: cluster, endpoints: [{ lb_endpoints: instances.map((instance) => ({ endpoint: { address: address(instance) } })) }] };
}

/**
 * Envoy's bootstrap: its admin (on loopback, or in compose on a network only the API and the deploy worker
 * join: never where a deployed service could reach it), and the listeners and clusters from the files in `dir`.
 */
export function edgeBootstrap(args: { dir: string; adminPort: number; adminHost?: string }) {
  return {
    node: { id: 'opsflow-edge', cluster: 'opsflow' },
    admin: { address: address({ host: args.adminHost ?? '127.0.0.1', port: args.adminPort }) },
    dynamic_resources: { lds_config: watchedFile(args.dir, 'lds.json'), cds_config: watchedFile(args.dir, 'cds.json') },
    // Histograms (the latency a canary step is judged on) reach the admin at each flush: every second, not five.
    stats_flush_interval: '1s',
    // A ceiling on open client connections, so a flood exhausts no file descriptors.
    overload_manager: {
      resource_monitors: [
        {
          name: 'envoy.resource_monitors.global_downstream_max_connections',
          typed_config: {
            '@type': type('envoy.extensions.resource_monitors.downstream_connections.v3.DownstreamConnectionsConfig'),
            max_active_downstream_connections: 50000,
          },
        },
      ],
    },
  };
}
