import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import type { OpenTelemetryWorkflowExporter } from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions';
import { startTracing } from '../lib/tracing/start';

// Imported first by workers/main.ts: tracing must patch `pg` and `http` before anything loads them.
export const tracing = startTracing('opsflow-worker');

/** The workflows' spans leave their sandbox by this sink; with tracing off here, they are dropped. */
type TraceSinks = InjectedSinks<{ exporter: OpenTelemetryWorkflowExporter }>;

/**
 * What a worker adds for tracing: the sink the workflows' spans leave by, and each activity's span, joined
 * to its run's trace. Both act only for a traced run (workflows/trace-interceptors.ts): an activity of any
 * other run starts no trace.
 */
export function workerTracing(): { sinks: TraceSinks; activity: ActivityInterceptorsFactory[] } {
  if (!tracing) return { sinks: { exporter: { export: { fn: () => undefined } } }, activity: [] };
  // Loaded only when tracing is on, as the SDK is (lib/tracing/start.ts).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const otel = require('@temporalio/interceptors-opentelemetry') as typeof import('@temporalio/interceptors-opentelemetry');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { TRACE_HEADER } = require('@temporalio/interceptors-opentelemetry/lib/instrumentation') as { TRACE_HEADER: string };
  return {
    sinks: { exporter: otel.makeWorkflowExporter(tracing.processor, tracing.resource) },
    activity: [
      (ctx) => {
        const traced = new otel.OpenTelemetryActivityInboundInterceptor(ctx);
        return {
          inbound: { execute: (input, next) => (TRACE_HEADER in input.headers ? traced.execute(input, next) : next(input)) },
          outbound: new otel.OpenTelemetryActivityOutboundInterceptor(ctx),
        };
      },
    ],
  };
}
