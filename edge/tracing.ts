import { isIP } from 'node:net';
import { address, EdgeTracing, type, verifiedUpstreamTls } from './xds';

const COLLECTOR_CLUSTER = 'opentelemetry_collector';
/** The trust store a collector's HTTPS is checked against: the system's (Debian's path, as in the images). */
const SYSTEM_CA_FILE = '/etc/ssl/certs/ca-certificates.crt';

/**
 * The connection manager's tracing: a span for each request, in the trace the client sent (W3C
 * `traceparent`) or in a new one kept at `sampleRatio`, its context passed on to the API or the service.
 */
export function edgeTracing(tracing: EdgeTracing) {
  return {
    random_sampling: { value: tracing.sampleRatio * 100 },
    provider: {
      name: 'envoy.tracers.opentelemetry',
      typed_config: {
        '@type': type('envoy.config.trace.v3.OpenTelemetryConfig'),
        http_service: { http_uri: { uri: `${tracing.endpoint}/v1/traces`, cluster: COLLECTOR_CLUSTER, timeout: '2s' } },
        service_name: 'opsflow-edge',
      },
    },
  };
}

/** A route's own tracing, off: an unsubscribe link's path holds its token, which no trace may keep. */
export const UNTRACED_ROUTE = { tracing: { overall_sampling: { numerator: 0, denominator: 'HUNDRED' } } };

/** The collector as a cluster: by address, or a name looked up again each few seconds (compose's `jaeger`). */
export function collectorCluster(tracing: EdgeTracing) {
  const url = new URL(tracing.endpoint);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const secure = url.protocol === 'https:';
  const port = Number(url.port || (secure ? 443 : 80));
  return {
    '@type': type('envoy.config.cluster.v3.Cluster'),
    name: COLLECTOR_CLUSTER,
    type: isIP(host) ? 'STATIC' : 'STRICT_DNS',
    connect_timeout: '2s',
    load_assignment: { cluster_name: COLLECTOR_CLUSTER, endpoints: [{ lb_endpoints: [{ endpoint: { address: address({ host, port }) } }] }] },
    ...(secure ? { transport_socket: { name: 'envoy.transport_sockets.tls', typed_config: verifiedUpstreamTls(host, SYSTEM_CA_FILE) } } : {}),
  };
}
