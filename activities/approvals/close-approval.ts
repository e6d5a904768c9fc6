import { APPROVAL_TABLE } from '../../data/approvals/approvals';
import { Decision } from '../../domain/approvals';
import { ApprovalsDeps } from './deps';

/**
 * Makes the approval row agree with the workflow's outcome. The decide endpoint already wrote it in the
 * same transaction that sent the signal; this covers a commit that failed after the signal went out.
 */
export function closeApproval({ db }: ApprovalsDeps) {
  return async (input: { correlationId: string; outcome: Decision }): Promise<void> => {
    await db(APPROVAL_TABLE).where({ correlation_id: input.correlationId, status: 'PENDING' }).update({ status: input.outcome, decided_at: db.fn.now() });
  };
}
