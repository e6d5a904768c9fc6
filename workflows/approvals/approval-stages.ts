import * as wf from '@temporalio/workflow';
import { ApprovalStage, Decision, durationMs, NoticeKind } from '../../domain/approvals';
import { startEmailBatch } from '../messaging/start-email-batch';
import { db } from './activities';
import { ChangeRun } from './change-run';

/**
 * Runs started before this marker emailed nobody; from it on, each stage's role holders are emailed when
 * the stage is reached, reminded and escalated on the stage's timers, and the requester gets the outcome.
 */
export const APPROVAL_NOTICES = 'approval-notices';

export type Notify = (kind: NoticeKind, stage: number, decided?: Decision) => Promise<void>;

/** Writes a notice's emails, and hands them to the messaging worker as a batch of their own. */
export function noticesOf(correlationId: string): Notify {
  return async (kind, stage, decided) => {
    const batchId = wf.uuid4();
    const recipients = await db.notifyApproval({ batchId, correlationId, kind, stage, outcome: decided });
    if (recipients === 0) return;
    await startEmailBatch(batchId);
  };
}

/**
 * Waits for each stage's decision, in order, and returns the outcome: APPROVED when every stage approved,
 * else the first stage's rejection, which ends the request. With `notify`, each stage's role holders are
 * told when it is reached, then reminded and escalated on its timers until it is decided.
 */
export async function decisionOfEveryStage(run: ChangeRun, stages: ApprovalStage[], notify: Notify | null): Promise<Decision> {
  let outcome: Decision = 'APPROVED';
  for (let stage = 0; stage < stages.length && outcome === 'APPROVED'; stage++) {
    run.progress.approvalStage = stage;
    const decided = () => run.decisions.some((decision) => decision.stage === stage);
    if (notify) await noticesUntilDecided({ stage, deadlines: stages[stage], decided, notify });
    await wf.condition(decided);
    outcome = run.decisions.find((decision) => decision.stage === stage)!.decision;
  }
  return outcome;
}

/** The stage's request, then its reminder and its escalation: durable timers, each cancelled by the decision. */
async function noticesUntilDecided(args: { stage: number; deadlines: ApprovalStage; decided: () => boolean; notify: Notify }): Promise<void> {
  const { stage, decided, notify } = args;
  await notify('REQUESTED', stage);
  const { remindAfter, escalateAfter } = args.deadlines;
  const reached = Date.now();
  const deadlines = [
    { kind: 'REMINDER' as const, after: remindAfter ? durationMs(remindAfter) : null },
    { kind: 'ESCALATED' as const, after: escalateAfter ? durationMs(escalateAfter) : null },
  ]
    .filter((deadline): deadline is { kind: 'REMINDER' | 'ESCALATED'; after: number } => deadline.after !== null)
    .sort((a, b) => a.after - b.after);
  for (const deadline of deadlines) {
    const left = reached + deadline.after - Date.now();
    if (left > 0 && (await wf.condition(decided, left))) break;
    if (decided()) break;
    await notify(deadline.kind, stage);
  }
}
