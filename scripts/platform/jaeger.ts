import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../../lib/project-root';
import { goBuildInto } from '../go-build';
import { withProgress } from '../progress';
import { goEnv } from '../temporal-server';
import { freePort, spawnLogged, waitForHttp } from './children';

/** The Jaeger v2 that docker-compose.yml builds too: monitoring/jaeger/go.mod names it. */
export const PINNED_JAEGER = '1.75.0';

const MODULE_DIR = path.join(PROJECT_ROOT, 'monitoring', 'jaeger');
const BINARY = path.join(PROJECT_ROOT, '.tools', 'jaeger', PINNED_JAEGER, 'jaeger');

/**
 * Jaeger v2 (`cmd/jaeger`, an OpenTelemetry Collector with Jaeger's storage and query), built once from its
 * Go module: minutes on two cores the first time. Its web UI is not part of the Go module (a git submodule of
 * its repository, which no registry here serves), so the binary serves Jaeger's API and a placeholder page.
 */
export async function ensureJaeger(say: (line: string) => void = () => undefined): Promise<string> {
  if (fs.existsSync(BINARY)) return BINARY;
  if (!goEnv('GOMODCACHE')) throw new Error('Go is needed to build Jaeger, which keeps the traces: apt-get install golang-go (1.26 or newer).');
  await withProgress(`building Jaeger ${PINNED_JAEGER} from the Go module proxy into ${path.dirname(BINARY)} (once)`, say, () =>
    goBuildInto({ moduleDir: MODULE_DIR, program: 'github.com/jaegertracing/jaeger/cmd/jaeger', output: BINARY }),
  );
  return BINARY;
}

export interface RunningJaeger {
  /** What OTEL_EXPORTER_OTLP_ENDPOINT names: OTLP/HTTP, traces at `/v1/traces`. */
  otlpUrl: string;
  /** Jaeger's query service: its API at `/api/traces/{id}` and `/api/traces?service=…`. */
  queryUrl: string;
  exited: Promise<string>;
  stop(): Promise<void>;
}

/**
 * Jaeger's configuration: OTLP over HTTP in, traces kept in memory (the newest `maxTraces`), the query API
 * out, all on loopback. Its own metrics are off: nothing else listens.
 */
function jaegerConfig(args: { otlpPort: number; queryPort: number; grpcPort: number; maxTraces: number }): string {
  return `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    # Its own tracer would send to localhost:4317, wherever that is.
    enable_tracing: false
    storage:
      traces: memory
    http:
      endpoint: 127.0.0.1:${args.queryPort}
    grpc:
      endpoint: 127.0.0.1:${args.grpcPort}
  jaeger_storage:
    backends:
      memory:
        memory:
          max_traces: ${args.maxTraces}
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${args.otlpPort}
processors:
  batch:
    timeout: 200ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memory
`;
}

/** Starts Jaeger on the given loopback ports, building it first when it is not there; answers once its API does. */
export async function startJaeger(args: { otlpPort: number; queryPort: number; logFile?: string; maxTraces?: number }): Promise<RunningJaeger> {
  const binary = await ensureJaeger();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-jaeger-'));
  const configFile = path.join(dir, 'config.yaml');
  // Its query's gRPC port, which nothing of ours uses, on a port of its own: with port 0, its HTTP API dialled
  // a port of another process instead, and said so every few seconds.
  const grpcPort = await freePort();
  fs.writeFileSync(configFile, jaegerConfig({ otlpPort: args.otlpPort, queryPort: args.queryPort, grpcPort, maxTraces: args.maxTraces ?? 10000 }));
  const jaeger = spawnLogged(binary, ['--config', configFile], args.logFile);
  const queryUrl = `http://127.0.0.1:${args.queryPort}`;
  const stop = async () => {
    await jaeger.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForHttp(`${queryUrl}/api/services`, {
      what: 'Jaeger',
      deadlineMs: 30000,
      stopIf: () => (jaeger.exit() === null ? null : `exited (${jaeger.exit()}): ${jaeger.said() || 'it said nothing'}`),
    });
    // Its API answers before its OTLP port is open: a span sent meanwhile would be lost.
    await waitForHttp(`http://127.0.0.1:${args.otlpPort}/v1/traces`, { what: "Jaeger's OTLP port", deadlineMs: 30000, isUp: (status) => status > 0 });
  } catch (error) {
    await stop();
    throw error;
  }
  return { otlpUrl: `http://127.0.0.1:${args.otlpPort}`, queryUrl, exited: jaeger.exited, stop };
}
