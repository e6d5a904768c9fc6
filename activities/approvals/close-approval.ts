import { closeApproval as closeApprovalRow } from '../../data/approvals/approvals';
import { Decision } from '../../domain/approvals';
import { ApprovalsDeps } from './deps';

/**
 * Makes the approval row agree with the workflow's outcome. The run confirmed each decision in the database
 * already; this covers an approval whose outcome the database did not record (a run decided by signal
 * before decisions became an Update).
 */
export function closeApproval({ db }: ApprovalsDeps) {
  return async (input: { correlationId: string; outcome: Decision }): Promise<void> => {
    await closeApprovalRow(db, input);
  };
}
