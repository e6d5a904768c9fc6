import { Env, integer, optional, text } from './read';

/** What the platform tells an operator about itself, beside its logs. */
export interface ObservabilityConfig {
  /**
   * Where a worker serves the Temporal SDK's metrics, as Prometheus text at /metrics: WORKER_METRICS_HOST
   * (loopback unless said) and WORKER_METRICS_PORT. Null when the port is not set.
   */
  workerMetrics: { host: string; port: number } | null;
}

export function observabilityConfig(env: Env): ObservabilityConfig {
  if (optional(env, 'WORKER_METRICS_PORT') === null) return { workerMetrics: null };
  // The SDK's exporter cannot say which port it took, so port 0 is refused: whoever starts a worker picks a free one.
  return { workerMetrics: { host: text(env, 'WORKER_METRICS_HOST', '127.0.0.1'), port: integer(env, 'WORKER_METRICS_PORT', 0, 1, 65535) } };
}
