import { WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { temporalError } from '../../temporal-config/temporal-errors';

/** How a run's awaited result, failed, becomes an answer: its own refusal keeps its code; a run out of time is late. */
const failedRun = (cause: Error) => new WorkflowFailedError('Workflow execution failed', cause, RetryState.NON_RETRYABLE_FAILURE);

test("a run's refusal, raised by one of its activities, keeps its catalogued code and words", () => {
  const refusal = ApplicationFailure.create({ message: 'The engine refused the limits', type: 'LIMITS_NOT_APPLIED', nonRetryable: true });
  const activity = new ActivityFailure('activity failed', 'applyContainerLimits', '1', RetryState.NON_RETRYABLE_FAILURE, 'worker', refusal);
  expect(temporalError(failedRun(activity))).toEqual(expect.objectContaining({ code: 'LIMITS_NOT_APPLIED', message: 'The engine refused the limits' }));
});

test("a run that ran out of its time is TEMPORAL_UNAVAILABLE with the caller's words, not a server error", () => {
  const timedOut = failedRun(new TimeoutFailure('timed out', undefined, TimeoutType.START_TO_CLOSE));
  expect(temporalError(timedOut, { late: 'The limits change did not end within 60 s.' })).toEqual(
    expect.objectContaining({ code: 'TEMPORAL_UNAVAILABLE', message: 'The limits change did not end within 60 s.' }),
  );
});

test('a failure that is no catalogued code gives nothing of its words away', () => {
  const failure = failedRun(ApplicationFailure.create({ message: 'secret detail', type: 'Error' }));
  expect(temporalError(failure)).toEqual(expect.objectContaining({ code: 'INTERNAL_ERROR', message: 'The workflow failed; the failure is in its history.' }));
});
