import { ConfigError, decimal, Env, integer, optional, text, url } from './read';

/** What the platform tells an operator about itself, beside its logs. */
export interface ObservabilityConfig {
  /**
   * Where a worker serves the Temporal SDK's metrics, as Prometheus text at /metrics: WORKER_METRICS_HOST
   * (loopback unless said) and WORKER_METRICS_PORT. Null when the port is not set.
   */
  workerMetrics: { host: string; port: number } | null;
  /** Where the platform's traces go, over OTLP/HTTP; null when OTEL_EXPORTER_OTLP_ENDPOINT is unset or `off`: no tracing (decision 045). */
  tracing: TracingConfig | null;
  /**
   * Where the console links a run's trace (TRACES_LINK): a URL in which `{workflowId}` stands for the run's
   * workflow id, as a trace search of the tracing backend's UI takes it. Null: no link.
   */
  tracesLink: string | null;
}

export interface TracingConfig {
  /** The collector's base URL (OTEL_EXPORTER_OTLP_ENDPOINT, the OpenTelemetry name): traces go to `{endpoint}/v1/traces`. */
  endpoint: string;
  /**
   * The share of new traces kept, from 0 to 1 (TRACE_SAMPLE_RATIO, 1 unless said). A request that arrives
   * inside a caller's trace follows the caller's choice.
   */
  sampleRatio: number;
}

export function observabilityConfig(env: Env): ObservabilityConfig {
  return { workerMetrics: workerMetricsConfig(env), tracing: tracingConfig(env), tracesLink: tracesLinkConfig(env) };
}

function workerMetricsConfig(env: Env): ObservabilityConfig['workerMetrics'] {
  if (optional(env, 'WORKER_METRICS_PORT') === null) return null;
  // The SDK's exporter cannot say which port it took, so port 0 is refused: whoever starts a worker picks a free one.
  return { host: text(env, 'WORKER_METRICS_HOST', '127.0.0.1'), port: integer(env, 'WORKER_METRICS_PORT', 0, 1, 65535) };
}

function tracingConfig(env: Env): TracingConfig | null {
  // Read even with tracing off: a wrong ratio is refused before the day it is turned on.
  const sampleRatio = decimal(env, 'TRACE_SAMPLE_RATIO', 1, 0, 1);
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT === 'off') return null;
  const endpoint = url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', null, ['http:', 'https:']);
  if (endpoint === null) return null;
  return { endpoint: endpoint.replace(/\/+$/, ''), sampleRatio };
}

function tracesLinkConfig(env: Env): string | null {
  const link = url(env, 'TRACES_LINK', null, ['http:', 'https:']);
  if (link !== null && !link.includes('{workflowId}')) throw new ConfigError('TRACES_LINK', "must hold {workflowId}, where the run's workflow id goes");
  return link;
}
