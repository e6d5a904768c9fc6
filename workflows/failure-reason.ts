import * as wf from '@temporalio/workflow';

/** The activity's own failure inside the SDK's wrapper around it; anything else is itself. */
export const causeOf = (error: unknown): unknown => (error instanceof wf.ActivityFailure && error.cause ? error.cause : error);

/**
 * Why an activity failed, for a job log or a progress query: the message of the activity's own failure, not
 * the SDK's wrapper around it. Anything else gives its own message.
 */
export function reasonOf(error: unknown): string {
  const cause = causeOf(error);
  return cause instanceof Error ? cause.message : String(cause);
}
