import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { startTracing } from '../lib/tracing/start';
// None of these loads `pg` or `http`: the SDK, started below, still finds both unloaded.
import { RunningJaeger, startJaeger } from '../scripts/platform/jaeger';
import { freePort } from '../scripts/platform/children';

/**
 * `--tracing` on a bench: the platform it runs sends every trace (sample ratio 1) to a Jaeger of the
 * bench's own, so a run with it and one without measure what tracing costs (decision 045). A bench imports
 * this first: in the bench's own process (where its API runs) the SDK patches `pg` and `http` as they load.
 * The OTLP port is chosen here, before any import can look: the SDK exports lazily, and Jaeger is started
 * on that port with the platform.
 */
const on = process.argv.includes('--tracing');
const otlpPort = on ? freePortNow() : 0;
if (on) process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${otlpPort}`;
else delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
const sdk = on ? startTracing('opsflow-api') : null;

/**
 * A free loopback port, found before this module's body goes on: the SDK below is told its collector's
 * address now. freePort draws outside the kernel's ephemeral range (a port an outgoing connection could
 * take meanwhile); it is asynchronous, so a short child process runs it.
 */
function freePortNow(): number {
  const draw = "require('./scripts/platform/children').freePort().then((port) => console.log(port))";
  return Number(execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', draw], { cwd: path.resolve(__dirname, '..'), encoding: 'utf8' }).trim());
}

/** Whether this run traces: `--tracing`. */
export const tracingOn = on;

/** Jaeger on the port the SDK sends to, when this run traces. */
export async function startBenchJaeger(): Promise<RunningJaeger | null> {
  if (!on) return null;
  const logFile = path.join(os.tmpdir(), `opsflow-bench-jaeger-${process.pid}.log`);
  console.log(`tracing: Jaeger's log in ${logFile}`);
  return startJaeger({ otlpPort, queryPort: await freePort(), maxTraces: 100000, logFile });
}

/** The line a bench prints first: tracing on or off, so two runs side by side say which is which. */
export function tracingLine(): string {
  return on ? `tracing: on (every trace kept, sent over OTLP to a Jaeger on 127.0.0.1:${otlpPort})` : 'tracing: off (OTEL_EXPORTER_OTLP_ENDPOINT unset)';
}

/** Flushes the bench process's own spans before it exits. */
export async function stopBenchTracing(): Promise<void> {
  await sdk?.stop();
}

/** What the run's Jaeger received, printed before it stops: a run with tracing on shows that it traced. */
export async function sayWhatJaegerHolds(jaeger: RunningJaeger | null): Promise<void> {
  if (!jaeger) return;
  // Each process exports its spans at least every second; the batch in flight is given time to land.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const services = ((await (await fetch(`${jaeger.queryUrl}/api/services`)).json()) as { data: string[] | null }).data ?? [];
  const counts = await Promise.all(
    services.map(async (service) => {
      const found = (await (await fetch(`${jaeger.queryUrl}/api/traces?service=${service}&limit=100000&lookback=1h`)).json()) as { data: unknown[] | null };
      return `${service} ${found.data?.length ?? 0}`;
    }),
  );
  console.log(`tracing: Jaeger holds traces from ${counts.join(', ') || 'no service'}`);
}
