import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';

/** What a promise was rejected with, or null when it resolved: so that a test asserts on the failure itself. */
export function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => null,
    (error: unknown) => error,
  );
}

/** The ApplicationFailure a run failed with, inside its WorkflowFailedError; fails the test if it did not fail so. */
export async function runFailure(result: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await rejectionOf(result);
  expect(error).toBeInstanceOf(WorkflowFailedError);
  const cause = (error as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  return cause as ApplicationFailure;
}
