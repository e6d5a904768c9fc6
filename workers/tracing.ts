import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { StartedTracing } from '../lib/tracing/sdk';
import { startTracing } from '../lib/tracing/start';
import { TRACE_HEADER, TraceSinks, WorkflowSpan } from '../workflows/trace-interceptors';

// Imported first by workers/main.ts: tracing must patch `pg` and `http` before anything loads them.
export const tracing = startTracing('opsflow-worker');

const asTime = (ms: number): [number, number] => [Math.floor(ms / 1000), (ms % 1000) * 1e6];

/** A workflow's span, as it left its sandbox, in the form OpenTelemetry's exporters take. */
function readableSpanOf(span: WorkflowSpan, started: StartedTracing): ReadableSpan {
  const context = { traceId: span.traceId, spanId: span.spanId, traceFlags: 1 };
  const durationMs = Math.max(0, span.endMs - span.startMs);
  return {
    name: span.name,
    // INTERNAL, as the SDK's own interceptors make them.
    kind: 0,
    spanContext: () => context,
    parentSpanId: span.parentSpanId,
    startTime: asTime(span.startMs),
    endTime: asTime(span.endMs),
    // OK, or ERROR with why.
    status: span.failure === null ? { code: 1 } : { code: 2, message: span.failure },
    attributes: span.attributes,
    links: [],
    events: [],
    duration: asTime(durationMs),
    ended: true,
    resource: started.resource,
    instrumentationLibrary: { name: 'opsflow-workflows' },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/**
 * What a worker adds for tracing: the sink the workflows' spans leave their sandbox by, and each activity's
 * span, joined to its run's trace. Both act only for a traced run (workflows/trace-interceptors.ts): an
 * activity of any other run starts no trace. With tracing off here, a traced run's spans are dropped.
 */
export function workerTracing(): { sinks: InjectedSinks<TraceSinks>; activity: ActivityInterceptorsFactory[] } {
  const started = tracing;
  if (!started) return { sinks: { traces: { export: { fn: () => undefined } } }, activity: [] };
  // Loaded only when tracing is on, as the SDK is (lib/tracing/start.ts).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const otel = require('@temporalio/interceptors-opentelemetry/lib/worker') as typeof import('@temporalio/interceptors-opentelemetry/lib/worker');
  return {
    // Never during a replay (the SDK's default): the spans were sent when the run first went through.
    sinks: { traces: { export: { fn: (_info, spans) => spans.forEach((span) => started.processor.onEnd(readableSpanOf(span, started))) } } },
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
