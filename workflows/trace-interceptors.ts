import type {
  ActivityInput,
  ContinueAsNewInput,
  GetLogAttributesInput,
  LocalActivityInput,
  Next,
  SignalInput,
  SignalWorkflowInput,
  StartChildWorkflowExecutionInput,
  UpdateInput,
  WorkflowExecuteInput,
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptors,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import { TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation';

type Inbound = WorkflowInboundCallsInterceptor;
type Outbound = WorkflowOutboundCallsInterceptor;

/** The OpenTelemetry interceptors of one traced run; none for a run that is not traced. */
interface Traced {
  inbound: OpenTelemetryInboundInterceptor;
  outbound: OpenTelemetryOutboundInterceptor;
}

/**
 * A run joins a trace only when whoever started it sent one (the platform's clients do while tracing is on).
 * Every other run (one started with tracing off, a schedule's, one saved before tracing existed) runs
 * exactly as with no interceptor at all: no span is made, and its replay cannot change. Whether a run is
 * traced is read from its start, which its history holds, so every replay decides the same.
 */
export const interceptors = (): WorkflowInterceptors => {
  const run: { traced: Traced | null } = { traced: null };
  return {
    inbound: [tracedInbound(run)],
    outbound: [tracedOutbound(run)],
    internals: [{ dispose: (input, next) => (run.traced ? new OpenTelemetryInternalsInterceptor().dispose(input, next) : next(input)) }],
  };
};

function tracedInbound(run: { traced: Traced | null }): Inbound {
  return {
    execute: (input: WorkflowExecuteInput, next: Next<Inbound, 'execute'>) => {
      if (!(TRACE_HEADER in input.headers)) return next(input);
      run.traced = { inbound: new OpenTelemetryInboundInterceptor(), outbound: new OpenTelemetryOutboundInterceptor() };
      return run.traced.inbound.execute(input, next);
    },
    handleSignal: (input: SignalInput, next: Next<Inbound, 'handleSignal'>) => (run.traced ? run.traced.inbound.handleSignal(input, next) : next(input)),
    handleUpdate: (input: UpdateInput, next: Next<Inbound, 'handleUpdate'>) => (run.traced ? run.traced.inbound.handleUpdate(input, next) : next(input)),
    validateUpdate: (input: UpdateInput, next: Next<Inbound, 'validateUpdate'>) => (run.traced ? run.traced.inbound.validateUpdate(input, next) : next(input)),
    // Queries are not traced: the console asks them every few seconds, and they change nothing.
  };
}

function tracedOutbound(run: { traced: Traced | null }): Outbound {
  return {
    scheduleActivity: (input: ActivityInput, next: Next<Outbound, 'scheduleActivity'>) =>
      run.traced ? run.traced.outbound.scheduleActivity(input, next) : next(input),
    scheduleLocalActivity: (input: LocalActivityInput, next: Next<Outbound, 'scheduleLocalActivity'>) =>
      run.traced ? run.traced.outbound.scheduleLocalActivity(input, next) : next(input),
    startChildWorkflowExecution: (input: StartChildWorkflowExecutionInput, next: Next<Outbound, 'startChildWorkflowExecution'>) =>
      run.traced ? run.traced.outbound.startChildWorkflowExecution(input, next) : next(input),
    continueAsNew: (input: ContinueAsNewInput, next: Next<Outbound, 'continueAsNew'>) =>
      run.traced ? run.traced.outbound.continueAsNew(input, next) : next(input),
    signalWorkflow: (input: SignalWorkflowInput, next: Next<Outbound, 'signalWorkflow'>) =>
      run.traced ? run.traced.outbound.signalWorkflow(input, next) : next(input),
    // The workflow's own log lines carry its trace id.
    getLogAttributes: (input: GetLogAttributesInput, next: Next<Outbound, 'getLogAttributes'>) =>
      run.traced ? run.traced.outbound.getLogAttributes(input, next) : next(input),
  };
}
