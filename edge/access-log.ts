import { REDACTED } from '../lib/link-secrets';

const STDOUT_LOG = 'type.googleapis.com/envoy.extensions.access_loggers.stream.v3.StdoutAccessLog';

const header = (name: string, match: Record<string, unknown>) => ({ header_filter: { header: { name, ...match } } });
/** The request was an unsubscribe link's: its path is `/u/…` as the client sent it (no route rewrote it). */
const UNSUBSCRIBE_LINK = {
  and_filter: {
    filters: [
      header(':path', { string_match: { prefix: '/u/', ignore_case: true } }),
      header('x-envoy-original-path', { present_match: true, invert_match: true }),
    ],
  },
};
const NOT_AN_UNSUBSCRIBE_LINK = {
  or_filter: {
    filters: [
      header(':path', { string_match: { prefix: '/u/', ignore_case: true }, invert_match: true }),
      header('x-envoy-original-path', { present_match: true }),
    ],
  },
};

/**
 * The edge's access log: one JSON line per request, on stdout. An unsubscribe link's token unsubscribes its
 * address with no sign-in, so its line names the path's shape only. Envoy's log format cannot rewrite part
 * of a path, but a filter can choose the line: two loggers share the work, split on the path. A deployed
 * service's own `/u/…`, reached through its slug's path, is logged as it came.
 */
export function edgeAccessLogs() {
  return [accessLog('%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%', NOT_AN_UNSUBSCRIBE_LINK), accessLog(`/u/${REDACTED}`, UNSUBSCRIBE_LINK)];
}

function accessLog(path: string, filter: Record<string, unknown>) {
  return {
    name: 'envoy.access_loggers.stdout',
    filter,
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
