import { Attributes, INVALID_SPAN_CONTEXT, isSpanContextValid, Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';

// What every process may use of tracing: only the OpenTelemetry API, which does nothing until a process
// starts the SDK (lib/tracing/sdk.ts). So with tracing off these cost next to nothing.

/** Paths probed every few seconds (the edge's checks, a scrape, readiness): a trace each would bury the ones that matter. */
export const PROBE_PATHS = ['/healthz', '/readyz', '/metrics'];

/** The active span's trace, for a log line: empty outside a traced request or run. */
export function traceFields(): { trace_id?: string; span_id?: string } {
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (!spanContext || !isSpanContextValid(spanContext)) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}

/**
 * Runs `work` inside a span of its own: a call to an outside system (the SMTP relay, say). Only inside a
 * traced request or run: a call with no trace around it would start a lone trace of one span. A failure
 * marks the span; what it says is the caller's to set, since only the caller knows what is safe to keep.
 */
export async function inSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  if (!trace.getActiveSpan()) return work(trace.wrapSpanContext(INVALID_SPAN_CONTEXT));
  return trace.getTracer('opsflow').startActiveSpan(name, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Names the request's span by its route (`POST /api/email/send/role`), as the metrics label it: a path may hold ids. */
export function nameRequestSpan(method: string, route: string): void {
  const span = trace.getActiveSpan();
  if (!span) return;
  span.updateName(`${method} ${route}`);
  span.setAttribute('http.route', route);
}
