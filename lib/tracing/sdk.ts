import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, ParentBasedSampler, SpanProcessor, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { TracingConfig } from '../config/observability';
import { loggablePath } from '../link-secrets';
import { PROBE_PATHS } from './index';

/** A process's tracing once started: its spans' way out, what names the process, and how to flush both at exit. */
export interface StartedTracing {
  processor: SpanProcessor;
  resource: Resource;
  stop(): Promise<void>;
}

const UNTRACED_PATHS = new Set(PROBE_PATHS);

/**
 * A URL as a span may keep it: no query (a callback's or a link's may carry a key), no user or password, and
 * an unsubscribe link's token left out (lib/link-secrets.ts).
 */
export function traceableUrl(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}${loggablePath(url.pathname)}`;
  } catch {
    return '[unparsed]';
  }
}

/** An HTTP span's URL attributes, set as it starts (they replace the library's own): kept as `traceableUrl` keeps them. */
function httpUrlAttributes(origin: string, pathAndQuery: string | null | undefined) {
  const path = (pathAndQuery ?? '/').split('?')[0];
  return { 'http.target': loggablePath(path), 'http.url': traceableUrl(`${origin}${path}`) };
}

/** The libraries whose calls become spans: HTTP in and out (the Docker engine, S3), fetch (peers, callbacks), PostgreSQL. */
function instrumentations() {
  return [
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (request) => UNTRACED_PATHS.has((request.url ?? '').split('?')[0]),
      // A call with no request or run around it (a poll, a cache refresh) starts no trace of its own.
      requireParentforOutgoingSpans: true,
      startIncomingSpanHook: (request) => httpUrlAttributes(`http://${request.headers.host ?? 'unknown'}`, request.url),
      startOutgoingSpanHook: (options) =>
        httpUrlAttributes(
          `${options.protocol ?? 'http:'}//${options.hostname ?? options.host ?? 'unknown'}${options.port ? `:${options.port}` : ''}`,
          options.path,
        ),
    }),
    new UndiciInstrumentation({
      requireParentforSpans: true,
      requestHook: (span, request) => span.setAttributes({ 'url.full': traceableUrl(`${request.origin}${request.path}`), 'url.query': '' }),
    }),
    new PgInstrumentation({ requireParentSpan: true }),
  ];
}

/**
 * Starts tracing for this process: the SDK, its export over OTLP/HTTP to `{endpoint}/v1/traces`, W3C trace
 * context in and out, and the libraries' spans. Must run before `pg` and `http` are first required: it
 * patches them as they load.
 */
export function startTracingSdk(serviceName: string, config: TracingConfig): StartedTracing {
  const resource = new Resource({ 'service.name': serviceName, 'service.namespace': 'opsflow' });
  const processor = new BatchSpanProcessor(new OTLPTraceExporter({ url: `${config.endpoint}/v1/traces` }), { scheduledDelayMillis: 1000 });
  const provider = new NodeTracerProvider({
    resource,
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sampleRatio) }),
    spanProcessors: [processor],
  });
  provider.register();
  registerInstrumentations({ tracerProvider: provider, instrumentations: instrumentations() });
  return { processor, resource, stop: () => provider.shutdown() };
}
