import { PROBE_PATHS } from '../lib/tracing';
import { UNTRACED_ROUTE } from './tracing';
import { ErrorCatalogue, ErrorCode } from '../lib/errors';
import { ACME_CHALLENGE_PREFIX, certifiedHostnames, hstsHeader, redirectToHttps } from './tls';
import { API_CLUSTER, canaryClusterOf, clusterOf, duration, EdgePlan, EdgeService, problem, ROUTES, setHeader, TLS_ROUTES, type } from './xds';

/**
 * The edge's routes: which requests go to the API, which to a service (by its path or its hostnames), and
 * what the edge answers itself. Pure: `files.ts` writes them for Envoy.
 */

/** What the edge's filters do on a route: nothing (the API verifies its own callers), or require a user. */
const PLATFORM_ROUTE = {
  'envoy.filters.http.header_mutation': { '@type': type('envoy.config.route.v3.FilterConfig'), disabled: true },
  'envoy.filters.http.jwt_authn': { '@type': type('envoy.extensions.filters.http.jwt_authn.v3.PerRouteConfig'), disabled: true },
};
const USER_ROUTE = {
  'envoy.filters.http.jwt_authn': { '@type': type('envoy.extensions.filters.http.jwt_authn.v3.PerRouteConfig'), requirement_name: 'user' },
};

/** Requests sent without a body: safe to send again. */
const BODYLESS_METHOD = { name: ':method', string_match: { safe_regex: { regex: '^(GET|HEAD|OPTIONS)$' } } };
/** Each service path has a route for requests without a body (retried on a reset), then one for the rest. */
const SERVICE_ROUTE_KINDS = [{ bodyless: true }, { bodyless: false }];
/** A route kind's match: the one for requests without a body also matches their method. */
const kindMatch = <Match extends Record<string, unknown>>(match: Match, how: { bodyless: boolean }) =>
  how.bodyless ? { ...match, headers: [BODYLESS_METHOD] } : match;
/** When a request is tried again: when nothing of it was sent; one without a body also when reset before its answer. */
const retryPolicy = (how: { bodyless: boolean }) => ({
  retry_on: how.bodyless ? 'connect-failure,refused-stream,reset' : 'connect-failure,refused-stream,reset-before-request',
  num_retries: 2,
});

/** A route the edge answers itself, with a problem of the catalogue. */
const problemRoute = (match: Record<string, unknown>, code: ErrorCode, detail: string, filters: Record<string, unknown>) => ({
  match,
  direct_response: { status: ErrorCatalogue[code].status, body: { inline_string: JSON.stringify(problem(code, detail)) } },
  response_headers_to_add: [setHeader('content-type', 'application/problem+json')],
  typed_per_filter_config: filters,
});

/**
 * Where a service's requests go: its cluster; in a rollout, the canary's share to the canary's cluster (all
 * of them at 100), by Envoy's weighted clusters. A canary with no share yet, or no instance, takes none.
 */
function clusterChoice(service: EdgeService): Record<string, unknown> {
  const canary = service.canary;
  if (!canary || canary.instances.length === 0 || canary.weight === 0) return { cluster: clusterOf(service.name) };
  if (canary.weight >= 100) return { cluster: canaryClusterOf(service.name) };
  return {
    weighted_clusters: {
      clusters: [
        { name: clusterOf(service.name), weight: 100 - canary.weight },
        { name: canaryClusterOf(service.name), weight: canary.weight },
      ],
    },
  };
}

/**
 * The routes: the platform's reserved slugs and everything outside `/api/` to the API, each service's slug
 * to its cluster, each service's hostnames to it on every path. Two sets, plain HTTP's and HTTPS's: on
 * plain HTTP a name with a certificate is redirected to HTTPS (ACME's challenges aside), and on HTTPS it is
 * served with HSTS.
 */
export function edgeRoutes(plan: EdgePlan) {
  // To the API, as to a service: a request without a body is tried again when its connection was reset before
  // the answer (a kept-alive connection the API closed a moment before, at its keep-alive timeout); any other
  // only when nothing of it was sent.
  const toApi = (match: Record<string, unknown>, untraced = false) =>
    SERVICE_ROUTE_KINDS.map((how) => ({
      match: kindMatch(match, how),
      route: { cluster: API_CLUSTER, timeout: '0s', retry_policy: retryPolicy(how) },
      typed_per_filter_config: PLATFORM_ROUTE,
      ...(untraced ? UNTRACED_ROUTE : {}),
    }));
  // Any request may be tried again on another instance when nothing of it was sent; a request without a
  // body (GET, HEAD, OPTIONS) also when its connection was reset before the answer, as a kept-alive
  // connection the instance closed a moment ago is. A request with a body is never sent twice.
  // By path, the service's prefix is cut and named in X-Forwarded-Prefix; by hostname, the path is the service's own.
  const toService = (service: EdgeService, match: Record<string, unknown>, how: { bodyless: boolean }, byHost = false) => ({
    match: kindMatch(match, how),
    route: {
      ...clusterChoice(service),
      ...(byHost ? {} : { prefix_rewrite: '/' }),
      timeout: '0s',
      idle_timeout: duration(plan.idleTimeoutMs),
      retry_policy: {
        ...retryPolicy(how),
        // Each try on an instance not tried yet: an instance that just failed is often one that is going away.
        retry_host_predicate: [
          {
            name: 'envoy.retry_host_predicates.previous_hosts',
            typed_config: { '@type': type('envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate') },
          },
        ],
        host_selection_retry_max_attempts: 3,
      },
    },
    request_headers_to_add: byHost ? [] : [setHeader('x-forwarded-prefix', `/api/${service.slug}`)],
    // The caller gets the request id the service was given, as from the platform's own routes.
    response_headers_to_add: [setHeader('x-request-id', '%REQ(X-REQUEST-ID)%')],
    typed_per_filter_config: USER_ROUTE,
  });
  // A service with no registered instance has no cluster yet: its first instance arrives with its cluster,
  // which Envoy health-checks before using, so it is routable at once (a host added to an empty cluster
  // would wait for its first check, a second later).
  const unavailable = (match: Record<string, unknown>, service: EdgeService) =>
    problemRoute(match, 'SERVICE_UNAVAILABLE', `${service.name} has no healthy instance.`, USER_ROUTE);
  const routes = [
    ...plan.reservedSlugs.flatMap((slug) => [...toApi({ path: `/api/${slug}` }), ...toApi({ prefix: `/api/${slug}/` })]),
    ...plan.services.flatMap((service): Array<Record<string, unknown>> =>
      ([{ path: `/api/${service.slug}` }, { prefix: `/api/${service.slug}/` }] as Array<Record<string, unknown>>).flatMap(
        (match): Array<Record<string, unknown>> =>
          service.instances.length > 0 ? SERVICE_ROUTE_KINDS.map((how) => toService(service, match, how)) : [unavailable(match, service)],
      ),
    ),
    // A slug-shaped path no service holds; anything else under /api/ (`/api/openapi.json`) is the API's.
    problemRoute(
      { safe_regex: { regex: '^/api/[a-z0-9][a-z0-9-]*(/.*)?$' } },
      'NOT_FOUND',
      'No platform route or deployed service has this path.',
      PLATFORM_ROUTE,
    ),
    // An unsubscribe link's token is in its path: the edge keeps no span of it (the access log names its shape
    // only). Probes come every few seconds: a trace each would bury the ones that matter.
    ...(plan.tracing ? [...toApi({ prefix: '/u/', case_sensitive: false }, true), ...PROBE_PATHS.flatMap((path) => toApi({ path }, true))] : []),
    ...toApi({ prefix: '/' }),
  ];
  const serviceRoutes = (service: EdgeService) => {
    const everyPath = { prefix: '/' };
    return service.instances.length > 0 ? SERVICE_ROUTE_KINDS.map((how) => toService(service, everyPath, how, true)) : [unavailable(everyPath, service)];
  };
  const byName = { routes, serviceRoutes, challenges: toApi({ prefix: ACME_CHALLENGE_PREFIX }) };
  const configuration = (name: string, scheme: 'http' | 'https') => ({
    '@type': type('envoy.config.route.v3.RouteConfiguration'),
    name,
    virtual_hosts: [...namedVirtualHosts(plan, byName, scheme), { name: 'all', domains: ['*'], routes }],
  });
  // One file each: Envoy's file-based RDS takes one route configuration per file.
  return { http: { resources: [configuration(ROUTES, 'http')] }, https: { resources: [configuration(TLS_ROUTES, 'https')] } };
}

type Route = Record<string, unknown>;

/**
 * The virtual hosts of names: each service's hostnames, and the platform's own names that hold a certificate
 * (the platform's names are never a service's, whatever a row says). On plain HTTP a name with a certificate
 * answers ACME's challenges and redirects the rest; on HTTPS it is served with HSTS. A name without one is
 * served on plain HTTP as on HTTPS, its challenges answered first.
 */
function namedVirtualHosts(
  plan: EdgePlan,
  parts: { routes: Route[]; serviceRoutes: (service: EdgeService) => Route[]; challenges: Route[] },
  scheme: 'http' | 'https',
) {
  const certified = certifiedHostnames(plan);
  // Envoy matches the Host header as sent, port included: `name:*` takes any port.
  const hostsOf = (hostnames: string[]) => hostnames.flatMap((hostname) => [hostname, `${hostname}:*`]);
  const redirect = plan.tls ? [{ match: { prefix: '/' }, redirect: redirectToHttps(plan.tls), typed_per_filter_config: PLATFORM_ROUTE }] : [];
  const ownNames = plan.platformHostnames ?? [];
  const named = [
    ...plan.services.map((service) => ({
      name: `service:${service.slug}`,
      hostnames: (service.domains ?? []).filter((hostname) => !ownNames.includes(hostname)),
      routes: parts.serviceRoutes(service),
    })),
    // The platform's names without a certificate are the catch-all's, as any other name.
    { name: 'platform', hostnames: ownNames.filter((hostname) => certified.has(hostname)), routes: parts.routes },
  ];
  return named.flatMap((host) => {
    const withCertificate = host.hostnames.filter((hostname) => certified.has(hostname));
    const without = host.hostnames.filter((hostname) => !certified.has(hostname));
    const secure =
      scheme === 'http'
        ? { name: `${host.name}:redirect`, domains: hostsOf(withCertificate), routes: [...parts.challenges, ...redirect] }
        : { name: `${host.name}:tls`, domains: hostsOf(withCertificate), routes: host.routes, response_headers_to_add: [hstsHeader()] };
    const plain = { name: host.name, domains: hostsOf(without), routes: [...(scheme === 'http' ? parts.challenges : []), ...host.routes] };
    return [...(withCertificate.length > 0 ? [secure] : []), ...(without.length > 0 ? [plain] : [])];
  });
}
