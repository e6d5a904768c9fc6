import { ApplicationFailure } from '@temporalio/common';
import { PlatformError } from '../../lib/errors';
import { submitApproval, Submitted } from '../../data/approvals/approvals';
import { PublishInput } from '../../domain/approvals';
import { ApprovalsDeps } from './deps';

/** Resolves the policy and, when approval is required, records it. Safe to repeat: keyed by the correlation id. */
export function submitForApproval({ db }: ApprovalsDeps) {
  return async (input: PublishInput & { correlationId: string; workflowId: string }): Promise<Submitted> => {
    try {
      return await submitApproval(db, input);
    } catch (error) {
      // A refusal (no published definition, another approval open) will not change by retrying.
      if (error instanceof PlatformError) throw ApplicationFailure.nonRetryable(error.message, error.code);
      throw error;
    }
  };
}
