import { submitApproval, Submitted } from '../../data/approvals/approvals';
import { PublishInput } from '../../domain/approvals';
import { refusalsAreFinal } from '../final-refusals';
import { ApprovalsDeps } from './deps';

/** Resolves the policy and, when approval is required, records it. Safe to repeat: keyed by the correlation id. */
export function submitForApproval({ db }: ApprovalsDeps) {
  // A refusal (no published definition, another approval open) will not change by retrying.
  return async (input: PublishInput & { correlationId: string; workflowId: string }): Promise<Submitted> => refusalsAreFinal(() => submitApproval(db, input));
}
