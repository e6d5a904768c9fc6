import { ContinueAsNew, defaultPayloadConverter, Headers, proxySinks, Sinks, WorkflowInterceptors, workflowInfo } from '@temporalio/workflow';

// The workflows' part of a trace (decision 045). A run joins a trace only when whoever started it sent one:
// the platform's clients do while tracing is on. Every other run (started with tracing off, by a schedule,
// or saved before tracing existed) runs exactly as with no interceptor. Whether a run is traced is read
// from its start, which its history holds, so every replay decides the same.
//
// This is a small tracer of its own rather than the SDK's OpenTelemetry interceptors: those bring the
// OpenTelemetry SDK into every workflow sandbox, which doubled the bundle's code (0.7 to 1.4 MB) and cost
// the approvals worker about 80 MiB at its peak, traced or not.

/** One span as it leaves the sandbox; the worker hands it to OpenTelemetry (workers/tracing.ts). */
export interface WorkflowSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  startMs: number;
  endMs: number;
  /** Why it failed, or null. */
  failure: string | null;
  attributes: Record<string, string>;
}

export interface TraceSinks extends Sinks {
  traces: { export(spans: WorkflowSpan[]): void };
}

/** Where the SDK's interceptors (the client's, the activities') carry a trace in Temporal's headers: the same place. */
export const TRACE_HEADER = '_tracer-data';
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

interface SpanContext {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

/** The trace a call came in with, from its headers (W3C trace context); null when it came with none. */
function contextIn(headers: Headers): SpanContext | null {
  const payload = headers[TRACE_HEADER];
  if (!payload) return null;
  const carrier = defaultPayloadConverter.fromPayload<{ traceparent?: string } | null>(payload);
  const found = TRACEPARENT.exec(carrier?.traceparent ?? '');
  return found ? { traceId: found[1], spanId: found[2], sampled: (parseInt(found[3], 16) & 1) === 1 } : null;
}

function headersWith(headers: Headers, context: SpanContext): Headers {
  const traceparent = `00-${context.traceId}-${context.spanId}-${context.sampled ? '01' : '00'}`;
  return { ...headers, [TRACE_HEADER]: defaultPayloadConverter.toPayload({ traceparent }) };
}

/** A span id: the sandbox's Math.random is seeded by the run, so a replay makes the same ids. */
function newSpanId(): string {
  let id = '';
  while (id.length < 16)
    id += Math.floor(Math.random() * 0x100000000)
      .toString(16)
      .padStart(8, '0');
  return id.slice(0, 16);
}

interface OpenSpan {
  context: SpanContext;
  end(failure: string | null): void;
}

/** Opens a span under `parent`; it leaves the sandbox when it ends, if its trace is kept (sampled). */
function open(name: string, parent: SpanContext, attributes: Record<string, string> = {}): OpenSpan {
  const context = { traceId: parent.traceId, spanId: newSpanId(), sampled: parent.sampled };
  const startMs = Date.now();
  return {
    context,
    end: (failure) => {
      if (!context.sampled) return;
      const { workflowId, runId } = workflowInfo();
      const span = { name, traceId: context.traceId, spanId: context.spanId, parentSpanId: parent.spanId, startMs, endMs: Date.now(), failure };
      proxySinks<TraceSinks>().traces.export([{ ...span, attributes: { temporalWorkflowId: workflowId, run_id: runId, ...attributes } }]);
    },
  };
}

/** Runs `work` inside `span`, which ends when it does: failed, unless the failure is how a run goes on (continue-as-new). */
async function insideSpan<T>(span: OpenSpan, work: () => Promise<T>): Promise<T> {
  try {
    const result = await work();
    span.end(null);
    return result;
  } catch (error) {
    span.end(error instanceof ContinueAsNew ? null : error instanceof Error ? error.message : String(error));
    throw error;
  }
}

export const interceptors = (): WorkflowInterceptors => {
  // The run's own span, once it is known to be traced; per run, as the interceptors are made per run.
  const run: { span: OpenSpan | null } = { span: null };
  /** A handler's span: under the trace of whoever called (an approver's request), else under the run's. */
  const handling = (name: string, headers: Headers) => {
    const parent = contextIn(headers) ?? run.span?.context;
    return parent ? open(name, parent) : null;
  };
  /** An activity's start, in a span of its own under the run's; the activity's run joins it by its headers. */
  const startingActivity = <I extends { activityType: string; headers: Headers }, R>(input: I, next: (input: I) => Promise<R>): Promise<R> => {
    if (!run.span) return next(input);
    const span = open(`StartActivity:${input.activityType}`, run.span.context);
    return insideSpan(span, () => next({ ...input, headers: headersWith(input.headers, span.context) }));
  };
  const withRunContext = <I extends { headers: Headers }>(input: I): I =>
    run.span ? { ...input, headers: headersWith(input.headers, run.span.context) } : input;
  return {
    inbound: [
      {
        execute: (input, next) => {
          const parent = contextIn(input.headers);
          if (!parent) return next(input);
          run.span = open(`RunWorkflow:${workflowInfo().workflowType}`, parent);
          return insideSpan(run.span, () => next(input));
        },
        handleSignal: (input, next) => {
          const span = run.span && handling(`HandleSignal:${input.signalName}`, input.headers);
          return span ? insideSpan(span, () => next(input)) : next(input);
        },
        handleUpdate: (input, next) => {
          const span = run.span && handling(`HandleUpdate:${input.name}`, input.headers);
          return span ? insideSpan(span, () => next(input)) : next(input);
        },
      },
    ],
    outbound: [
      {
        scheduleActivity: startingActivity,
        scheduleLocalActivity: startingActivity,
        // A child, the next run after continue-as-new, and a signalled run join this run's trace.
        startChildWorkflowExecution: (input, next) => next(withRunContext(input)),
        continueAsNew: (input, next) => next(withRunContext(input)),
        signalWorkflow: (input, next) => next(withRunContext(input)),
        getLogAttributes: (input, next) => next(run.span ? { trace_id: run.span.context.traceId, span_id: run.span.context.spanId, ...input } : input),
      },
    ],
  };
};
