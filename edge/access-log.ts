import { REDACTED } from '../lib/link-secrets';

const STDOUT_LOG = 'type.googleapis.com/envoy.extensions.access_loggers.stream.v3.StdoutAccessLog';

/**
 * The edge's access log: one JSON line per request, on stdout. An unsubscribe link's token unsubscribes its
 * address with no sign-in, so its line names the path's shape only. Envoy's log format cannot rewrite part
 * of a path, but a filter can choose the line: two loggers share the work, split on the path.
 */
export function edgeAccessLogs() {
  return [accessLog('%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%', false), accessLog(`/u/${REDACTED}`, true)];
}

function accessLog(path: string, unsubscribeLinks: boolean) {
  return {
    name: 'envoy.access_loggers.stdout',
    filter: { header_filter: { header: { name: ':path', string_match: { prefix: '/u/', ignore_case: true }, invert_match: !unsubscribeLinks } } },
    typed_config: {
      '@type': STDOUT_LOG,
      log_format: {
        json_format: {
          time: '%START_TIME%',
          component: 'edge',
          requestId: '%REQ(X-REQUEST-ID)%',
          method: '%REQ(:METHOD)%',
          path,
          status: '%RESPONSE_CODE%',
          flags: '%RESPONSE_FLAGS%',
          upstream: '%UPSTREAM_HOST%',
          durationMs: '%DURATION%',
          bytesSent: '%BYTES_SENT%',
        },
      },
    },
  };
}
