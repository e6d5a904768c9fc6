import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { conflict, ErrorCode, ProblemError, problemOfFailure, unavailable } from '../../lib/errors';

class AnswerTimeout extends Error {}

/**
 * Waits at most `ms` for a Temporal call that waits on a worker (an Update); the call itself goes on.
 * Past the limit the answer is 503 TEMPORAL_UNAVAILABLE.
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

/**
 * One mapping from a failed start, Update or Update-with-Start to problem+json: a refusal keeps the code
 * of the catalogue it was raised with; a run already open or gone gets the caller's code; anything else
 * means Temporal (or its worker) did not answer.
 */
export function problemOfWorkflowCall(
  error: unknown,
  codes: { alreadyRunning?: [ErrorCode, string]; notFound?: [ErrorCode, string]; late?: string } = {},
): ProblemError {
  if (error instanceof ProblemError) return error;
  if (error instanceof WorkflowUpdateFailedError) {
    const failure = applicationFailureIn(error);
    return failure ? problemOfFailure(failure) : problemOfFailure({ message: error.message });
  }
  if (error instanceof WorkflowExecutionAlreadyStartedError && codes.alreadyRunning) return conflict(...codes.alreadyRunning);
  if (error instanceof WorkflowNotFoundError && codes.notFound) return conflict(...codes.notFound);
  if (error instanceof AnswerTimeout) return unavailable('TEMPORAL_UNAVAILABLE', codes.late ?? 'Temporal or its worker did not answer in time.');
  return unavailable('TEMPORAL_UNAVAILABLE', 'Temporal did not answer.');
}
