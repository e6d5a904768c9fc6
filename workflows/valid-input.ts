import { ApplicationFailure } from '@temporalio/workflow';
import { Problem } from '../domain/workflow-input';

/**
 * A workflow's first step: refuse an input its domain's check finds wrong, before any activity runs. The API
 * checks its requests, but a run can be started on Temporal directly; this holds for that caller too. The
 * failure is not retried: the same input would fail the same way.
 */
export function refuseInvalidInput(problem: Problem): void {
  if (problem) throw ApplicationFailure.nonRetryable(`The workflow's input is refused: ${problem}.`, 'VALIDATION_FAILED');
}
