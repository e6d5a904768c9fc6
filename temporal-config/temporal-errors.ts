import {
  isGrpcServiceError,
  ServiceError,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { ApplicationFailure, TimeoutFailure } from '@temporalio/common';
import { ErrorCode, PlatformError, problemOfFailure } from '../lib/errors';

class AnswerTimeout extends Error {}

/**
 * Waits at most `ms` for a Temporal call that waits on a worker (an Update); the call itself goes on.
 * Past the limit it fails as TEMPORAL_UNAVAILABLE (see `temporalError`).
 */
export async function answerWithin<T>(ms: number, call: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new AnswerTimeout()), ms);
  });
  try {
    return await Promise.race([call, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The innermost ApplicationFailure of a failure chain: the activity's or workflow's own refusal. */
function applicationFailureIn(error: unknown): ApplicationFailure | null {
  let found: ApplicationFailure | null = null;
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof ApplicationFailure) found = cause;
  }
  return found;
}

/** gRPC statuses that mean the server did not answer: UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED. */
const UNANSWERED = new Set([14, 4, 8]);

/**
 * The one translation of Temporal client errors into the catalogue, for every caller: a refusal raised in a
 * workflow or activity (an Update's, or a run's awaited result) keeps its code; a run already open is 409 (the caller's code, else
 * WORKFLOW_ALREADY_RUNNING); a run that is not there is 404 (or the caller's code); a server or worker that
 * does not answer is 503 TEMPORAL_UNAVAILABLE. Null for an error that is not Temporal's.
 */
export function temporalError(
  error: unknown,
  codes: { alreadyRunning?: [ErrorCode, string]; notFound?: [ErrorCode, string]; late?: string } = {},
): PlatformError | null {
  if (error instanceof PlatformError) return error;
  // A run that ran out of its time was not answered by a worker in time: as late as an answer that never came.
  if (error instanceof WorkflowFailedError && error.cause instanceof TimeoutFailure) {
    return new PlatformError('TEMPORAL_UNAVAILABLE', codes.late ?? 'Temporal or its worker did not answer in time.');
  }
  if (error instanceof WorkflowUpdateFailedError || error instanceof WorkflowFailedError) {
    const failure = applicationFailureIn(error);
    return failure ? problemOfFailure(failure) : problemOfFailure({ message: error.message });
  }
  if (error instanceof WorkflowExecutionAlreadyStartedError) {
    return new PlatformError(
      ...(codes.alreadyRunning ?? (['WORKFLOW_ALREADY_RUNNING', `A run of ${error.workflowId} is already in progress.`] as [ErrorCode, string])),
    );
  }
  if (error instanceof WorkflowNotFoundError) return new PlatformError(...(codes.notFound ?? (['NOT_FOUND', 'No such workflow run.'] as [ErrorCode, string])));
  if (error instanceof AnswerTimeout || error instanceof WorkflowUpdateRPCTimeoutOrCancelledError) {
    return new PlatformError('TEMPORAL_UNAVAILABLE', codes.late ?? 'Temporal or its worker did not answer in time.');
  }
  if (error instanceof ServiceError || isGrpcServiceError(error)) {
    const grpc = isGrpcServiceError(error) ? error : isGrpcServiceError(error.cause) ? error.cause : null;
    if (!grpc || UNANSWERED.has(grpc.code)) return new PlatformError('TEMPORAL_UNAVAILABLE', 'Temporal did not answer.');
  }
  return null;
}

/** `temporalError`, for a call whose every failure is Temporal's: anything else means Temporal did not answer. */
export function temporalCallError(error: unknown, codes: Parameters<typeof temporalError>[1] = {}): PlatformError {
  return temporalError(error, codes) ?? new PlatformError('TEMPORAL_UNAVAILABLE', 'Temporal did not answer.');
}
