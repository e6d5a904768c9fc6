import { ApplicationFailure } from '@temporalio/common';
import { ErrorCode } from '../lib/errors';

/**
 * The only ways an activity fails with a type of its own: a code of the catalogue (lib/errors.ts), so that
 * the type a workflow, the API and an operator see is one the platform knows; a typo does not type-check.
 * The lint refuses ApplicationFailure's own factories anywhere else in activities/.
 */

/** Fails the activity for good: retrying cannot change the outcome. `details` travel with it (sealed, as every payload). */
export function finalFailure(code: ErrorCode, message: string, details?: unknown[]): ApplicationFailure {
  return ApplicationFailure.create({ message, type: code, nonRetryable: true, details });
}

/** Fails this attempt only: Temporal tries the activity again under its retry policy. */
export function retryableFailure(code: ErrorCode, message: string): ApplicationFailure {
  return ApplicationFailure.create({ message, type: code, nonRetryable: false });
}
