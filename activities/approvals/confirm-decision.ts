import { confirmDecision as confirmRecordedDecision } from '../../data/approvals/approvals';
import { ConfirmedDecision, DecideRequest } from '../../domain/approvals';
import { refusalsAreFinal } from '../final-refusals';
import { ApprovalsDeps } from './deps';

/**
 * Confirms, in the platform's database, the decision the decide endpoint recorded, and answers it as the
 * database has it: what the run acts on never comes from the Update's payload. A refusal (no such
 * decision, the stage already decided, the four-eyes rule) fails the Update and changes nothing.
 */
export function confirmDecision({ db }: ApprovalsDeps) {
  return async (input: DecideRequest & { correlationId: string }): Promise<ConfirmedDecision> => {
    const record = await refusalsAreFinal(() => confirmRecordedDecision(db, input));
    return { stage: record.stage, decision: record.decision, decidedBy: record.decidedBy };
  };
}
