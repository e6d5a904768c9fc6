import { ApplicationFailure, patched } from '@temporalio/workflow';
import { Problem } from '../domain/workflow-input';

/** The patch that brought input checks: runs begun before it (or before a check was tightened) go on as they began. */
export const INPUT_CHECKED = 'input-checked';

/**
 * A workflow's first step: refuse an input its domain's check finds wrong, before any activity runs. The API
 * checks its requests, but a run can be started on Temporal directly; this holds for that caller too. The
 * failure is not retried: the same input would fail the same way. Only a refused input asks for the patch,
 * so a run with a good input records no marker, and an open run whose input a later check would refuse
 * replays as it began rather than break on a determinism error.
 */
export function refuseInvalidInput(problem: Problem): void {
  if (problem && patched(INPUT_CHECKED)) throw ApplicationFailure.nonRetryable(`The workflow's input is refused: ${problem}.`, 'VALIDATION_FAILED');
}
