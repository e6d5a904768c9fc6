import { archiveInputProblem, PublishInput } from '../../domain/approvals';
import { refuseInvalidInput } from '../valid-input';
import { db } from './activities';
import { answerRequests, ChangeRun, startChangeRun } from './change-run';
import { PublishProgress } from './definitions';
import { endCancelled, finishDone, notBefore, recordSchedule, SCHEDULE_LEAD_MS, untilItsTime } from './scheduled-change';

/**
 * Archives one component at its due time: the change is listed as scheduled, the run waits for its time on
 * a durable timer, then archives the component. Until the time comes, the cancel endpoint can stop it.
 * It runs under the item's publish id, so an item has one publish or archive under way at a time.
 */
export async function archiveComponent(input: PublishInput): Promise<PublishProgress> {
  refuseInvalidInput(archiveInputProblem(input));
  const run = startChangeRun(input);
  answerRequests(run);
  return archiveAtItsTime(run, () => SCHEDULE_LEAD_MS);
}

/**
 * The archive itself. Publish runs started before archiveComponent existed archive through this too: they
 * ask `leadMs` whether they wake early, after the schedule is recorded, as they always did.
 */
export async function archiveAtItsTime(run: ChangeRun, leadMs: () => number): Promise<PublishProgress> {
  await recordSchedule(run);
  const lead = leadMs();
  if (!(await untilItsTime(run, lead))) return endCancelled(run);
  run.progress.stage = 'ARCHIVING';
  await db.archiveNow({ ...run.input, notBefore: notBefore(run, lead) });
  await finishDone(run, 'archived');
  run.progress.stage = 'ARCHIVED';
  return run.progress;
}
