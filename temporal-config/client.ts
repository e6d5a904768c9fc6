import {
  Client,
  Connection,
  defaultGrpcRetryOptions,
  makeGrpcRetryInterceptor,
  WorkflowExecutionDescription,
  WorkflowNotFoundError,
  WorkflowClientInterceptor,
  WorkflowStartOptions,
} from '@temporalio/client';
import * as grpc from '@grpc/grpc-js';
import { PayloadCodec, Workflow } from '@temporalio/common';
import { ErrorCode } from '../lib/errors';
import { temporalCallError } from './temporal-errors';
import { serviceTokenOf } from './service-identity';
import { clientTlsOf } from './server-certificates';
import { payloadCodecOf, platformDataConverter } from './payload-codec';
import type { Config } from '../lib/config';
import type { FairShare } from '../domain/fairness';

export interface TemporalHandle {
  connection: Connection;
  client: Client;
  namespace: string;
  uiUrl: string;
  /** The process's service token, renewed before it expires (the workers' pollers carry it too); null where the server checks none. */
  serviceToken: (() => string) | null;
}

export interface StartedWorkflow {
  workflowId: string;
  runId: string;
  uiUrl: string;
}

/** A client of the platform's namespace; every payload it sends or reads goes through `payloadCodec` (temporal-config/payload-codec.ts). */
export async function connectTemporal(args: {
  address: string;
  namespace: string;
  uiUrl: string;
  payloadCodec: PayloadCodec;
  /** Where the server's door asks for the platform's service tokens (TEMPORAL_IDENTITY_DIR): each call carries a fresh one. */
  identity?: { dir: string | null; subject: string };
  /** The authority the cluster's frontend certificate is verified against (TEMPORAL_TLS_CA_FILE); none: plaintext. */
  tlsCaFile?: string | null;
  /** Whether the runs this client starts, signals and updates join the caller's trace (tracing is on). */
  traced?: boolean;
}): Promise<TemporalHandle> {
  const apiKey = serviceTokenOf(args.identity, args.namespace);
  // TLS is said outright either way: given an API key, the SDK would turn it on by itself (Temporal Cloud's way).
  const connection = await Connection.connect({
    address: args.address,
    interceptors: platformGrpcInterceptors(),
    connectTimeout: 5000,
    ...(apiKey ? { apiKey } : {}),
    tls: clientTlsOf(args.tlsCaFile ?? null) ?? false,
  });
  return {
    connection,
    client: new Client({
      connection,
      namespace: args.namespace,
      dataConverter: platformDataConverter(args.payloadCodec),
      interceptors: { workflow: args.traced ? tracedWorkflowCalls() : [] },
    }),
    namespace: args.namespace,
    uiUrl: args.uiUrl,
    serviceToken: apiKey,
  };
}

/**
 * The platform's own client of its namespace, everything read from its configuration: the codec of its
 * payload keys, the service tokens of its identity folder (signed for `subject`), and TLS to the cluster.
 */
export function connectPlatformTemporal(
  config: PlatformTemporalConfig,
  subject: string,
  payloadCodec: PayloadCodec = payloadCodecOf(config),
): Promise<TemporalHandle> {
  return connectTemporal({
    address: config.temporal.address,
    namespace: config.temporal.namespace,
    uiUrl: config.temporal.uiUrl,
    payloadCodec,
    identity: { dir: config.temporal.identityDir, subject },
    tlsCaFile: config.temporal.tlsCaFile,
    traced: config.observability.tracing !== null,
  });
}

/** The client's calls carry the caller's trace into the run; loaded only when tracing is on, as the SDK is. */
function tracedWorkflowCalls(): WorkflowClientInterceptor[] {
  type TracedClient = typeof import('@temporalio/interceptors-opentelemetry/lib/client');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const traced = require('@temporalio/interceptors-opentelemetry/lib/client') as TracedClient;
  return [new traced.OpenTelemetryWorkflowClientInterceptor()];
}

type PlatformTemporalConfig = Pick<Config, 'temporal' | 'observability'>;

/** A link into the Temporal Web UI for one run. */
export function workflowUiUrl(temporal: Pick<TemporalHandle, 'namespace' | 'uiUrl'>, workflowId: string, runId: string): string {
  return `${temporal.uiUrl}/namespaces/${encodeURIComponent(temporal.namespace)}/workflows/${encodeURIComponent(workflowId)}/${encodeURIComponent(runId)}/history`;
}

/**
 * Starts a workflow with its deterministic id and answers what every API response that started one carries:
 * `workflowId`, `runId`, `uiUrl`. A run already open under that id is a 409 with `alreadyRunningCode`. The
 * run's fair share is required: every run the platform starts carries one (domain/fairness.ts).
 */
export async function startWorkflow<W extends Workflow>(
  temporal: TemporalHandle,
  workflow: W | string,
  options: WorkflowStartOptions<W> & { priority: FairShare; alreadyRunningCode?: ErrorCode },
): Promise<StartedWorkflow> {
  const { alreadyRunningCode, ...startOptions } = options;
  try {
    const handle = await temporal.client.workflow.start(workflow, startOptions as WorkflowStartOptions<W>);
    return { workflowId: handle.workflowId, runId: handle.firstExecutionRunId, uiUrl: workflowUiUrl(temporal, handle.workflowId, handle.firstExecutionRunId) };
  } catch (error) {
    throw temporalCallError(error, {
      alreadyRunning: [alreadyRunningCode ?? 'WORKFLOW_ALREADY_RUNNING', `A run of ${options.workflowId} is already in progress.`],
    });
  }
}

/**
 * A run as Temporal describes it, or null when there is no such run (never started, or past retention):
 * the one place a run's absence is read from the client's WorkflowNotFoundError. Other failures are thrown.
 */
export async function describeRun(
  temporal: Pick<TemporalHandle, 'client'>,
  workflowId: string,
  runId?: string | null,
): Promise<WorkflowExecutionDescription | null> {
  try {
    return await temporal.client.workflow.getHandle(workflowId, runId ?? undefined).describe();
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return null;
    throw error;
  }
}

/** How a run stands: its status name (`RUNNING`, `COMPLETED`, `TERMINATED`, …), or `NOT_FOUND`. */
export function runStatusOf(temporal: Pick<TemporalHandle, 'client'>) {
  return async (run: { workflowId: string; runId: string | null }): Promise<string> =>
    (await describeRun(temporal, run.workflowId, run.runId))?.status.name ?? 'NOT_FOUND';
}

/**
 * Below the SDK's retries: a call asked of a connection already closed ends CANCELLED instead of throwing.
 * The SDK keeps its retry timers when a connection closes, and a retry that fires after the close asked the
 * closed channel for a call, which threw inside the timer ("Channel has been shut down"): an uncaught error
 * that ended the process (an API or worker shutting down, a test file in CI). Its caller now gets the failure.
 */
const closedConnectionEndsTheCall: grpc.Interceptor = (options, nextCall) => {
  try {
    return new grpc.InterceptingCall(nextCall(options));
  } catch (error) {
    if (!(error instanceof Error) || error.message !== 'Channel has been shut down') throw error;
    const closed: ConstructorParameters<typeof grpc.InterceptingCall>[0] = {
      start: (_metadata, listener) =>
        setImmediate(() =>
          listener?.onReceiveStatus?.({ code: grpc.status.CANCELLED, details: 'the Temporal connection was closed', metadata: new grpc.Metadata() }),
        ),
      sendMessageWithContext: () => undefined,
      sendMessage: () => undefined,
      startRead: () => undefined,
      halfClose: () => undefined,
      cancelWithStatus: () => undefined,
      getPeer: () => '',
      getAuthContext: () => null,
    };
    return new grpc.InterceptingCall(closed);
  }
};

/** The SDK's retries of failed calls (its default), and below them the guard that a closed connection needs. */
export function platformGrpcInterceptors(): grpc.Interceptor[] {
  return [makeGrpcRetryInterceptor(defaultGrpcRetryOptions()), closedConnectionEndsTheCall];
}
