import path from 'node:path';
import type { Config } from '../../lib/config';
import { ensureJaeger, PINNED_JAEGER, startJaeger } from './jaeger';
import { ensurePrometheus, startPrometheus } from './prometheus';
import { keepRunning, step } from './lifecycle';

// What `npm start` runs for an operator to watch the platform: Jaeger for its traces (decision 045), and
// Prometheus scraping it with the alert rules loaded (decision 044). Each is kept running like every part.

/** Jaeger, kept running: it keeps the newest traces in memory. Built on a fresh machine's first start (minutes, once). Answers its API's address. */
export async function startTraces(ports: { otlpPort: number; queryPort: number }, logs: string): Promise<string> {
  await ensureJaeger(step);
  const jaegerArgs = { ...ports, logFile: path.join(logs, 'jaeger.log') };
  const jaeger = await startJaeger(jaegerArgs);
  keepRunning('traces (Jaeger)', jaeger, () => startJaeger(jaegerArgs), jaegerArgs.logFile);
  step(`traces: Jaeger ${PINNED_JAEGER}, OTLP on ${jaeger.otlpUrl}, its API on ${jaeger.queryUrl}`);
  return jaeger.queryUrl;
}

/**
 * Prometheus on loopback `port`, kept running: it scrapes the API (with the internal token) and the worker,
 * evaluates monitoring/prometheus/alerts.yml, and keeps two days in `dataDir`. Answers its address.
 */
export async function startPrometheusKept(config: Config, port: number, dataDir: string, logs: string): Promise<string> {
  await ensurePrometheus(step);
  const metrics = config.observability.workerMetrics;
  const prometheusArgs = {
    port,
    dataDir: path.join(dataDir, 'prometheus'),
    targets: {
      api: `127.0.0.1:${config.api.listenPort}`,
      internalToken: config.secrets.internalToken,
      workers: metrics ? [`${metrics.host}:${metrics.port}`] : [],
    },
    logFile: path.join(logs, 'prometheus.log'),
  };
  const prometheus = await startPrometheus(prometheusArgs);
  keepRunning('Prometheus', prometheus, () => startPrometheus(prometheusArgs), prometheusArgs.logFile);
  step(`Prometheus on ${prometheus.url}, the alert rules loaded`);
  return prometheus.url;
}
