import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { reasonOf } from './failure-reason';

const wrapped = (cause?: Error) => new ActivityFailure('Activity task failed', 'deployInstances', '7', RetryState.NON_RETRYABLE_FAILURE, 'worker-1', cause);

test("an activity's failure reads as its own message, not the wrapper's", () => {
  expect(reasonOf(wrapped(ApplicationFailure.nonRetryable('the engine is gone', 'DOCKER_UNAVAILABLE')))).toBe('the engine is gone');
});

test('a wrapper without a cause, another error, or a thrown value reads as itself', () => {
  expect(reasonOf(wrapped())).toBe('Activity task failed');
  expect(reasonOf(new Error('cancelled'))).toBe('cancelled');
  expect(reasonOf('late')).toBe('late');
});
