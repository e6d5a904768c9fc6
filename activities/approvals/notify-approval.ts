import { writeApprovalNotice } from '../../data/approvals/notices';
import { Decision, NoticeKind } from '../../domain/approvals';
import { ApprovalsDeps } from './deps';

export interface NotifyApprovalInput {
  /** The notice's email batch: chosen by the run, so a retry writes the same one. */
  batchId: string;
  correlationId: string;
  kind: NoticeKind;
  stage: number;
  outcome?: Decision;
}

/** Writes an approval notice's emails (sent by the messaging worker); answers how many recipients it has. */
export function notifyApproval({ db, config }: ApprovalsDeps) {
  return async (input: NotifyApprovalInput): Promise<number> => writeApprovalNotice(db, { ...input, publicUrl: config.api.publicUrl });
}
