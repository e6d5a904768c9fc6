import * as wf from '@temporalio/workflow';
import { archiveRunInputProblem } from '../../domain/archival';
import { reasonOf } from '../failure-reason';
import { refuseInvalidInput } from '../valid-input';
import { archiveExpiredMonths, finishHalfDoneMonths } from './archive-months';
import { ArchiveRun, startArchiveRun } from './archive-run';
import { archiveEverySite, sitesOfRun } from './archive-sites';
import { ArchiveRunInput, ArchiveRunProgress } from './definitions';

/** Runs started before this marker archived row by row only; from it on, months past retention go whole first. */
export const PARTITION_DROP = 'partition-drop';

/**
 * One archive run of one log type. First it finishes the parts earlier runs recorded but did not finish.
 * Then, on a run of every site, each month of the log table that is past retention for every site in it is
 * archived whole: exported per site, every part uploaded and confirmed, the month detached, recorded and
 * dropped, with no row deleted (months an earlier run left half-way first). Then, site by site: resolve the
 * retention, export the rows older than the cutoff (recording every part before any upload), upload each
 * part and wait for the sink's confirmation, and only then delete exactly the exported rows. A site that
 * fails deletes nothing unconfirmed and does not stop the others; the run fails at the end if any site failed.
 */
export async function archiveLogs(input: ArchiveRunInput): Promise<ArchiveRunProgress> {
  refuseInvalidInput(archiveRunInputProblem(input));
  const run = startArchiveRun(input);
  const monthsGoWhole = !input.dryRun && !input.siteId && wf.patched(PARTITION_DROP);
  if (monthsGoWhole) await finishHalfDoneMonths(run);
  const blockedSites = input.dryRun ? new Map<string, string>() : await finishEarlierParts(run);
  if (monthsGoWhole) await archiveExpiredMonths(run, blockedSites);
  run.progress.sites = await sitesOfRun(run, blockedSites);
  await archiveEverySite(run, blockedSites);
  return endRun(run);
}

/**
 * Uploads and deletes the parts earlier runs recorded but did not finish. Answers the sites whose part
 * could not be finished, with why: they archive nothing more in this run.
 */
async function finishEarlierParts(run: ArchiveRun): Promise<Map<string, string>> {
  const blockedSites = new Map<string, string>();
  for (const part of await run.act.listUnfinishedParts({ logType: run.input.logType, siteId: run.input.siteId })) {
    if (blockedSites.has(part.siteId)) continue;
    try {
      if (part.state === 'EXPORTED') await run.act.uploadPart({ partId: part.partId });
      await run.act.deleteArchivedRows({ partId: part.partId });
      run.progress.resumedParts += 1;
    } catch (error) {
      blockedSites.set(part.siteId, `an earlier run's part could not be finished: ${reasonOf(error)}`);
    }
  }
  return blockedSites;
}

/** Closes the run: COMPLETED, or FAILED naming every site and month that failed, with the progress as details. */
function endRun({ input, progress }: ArchiveRun): ArchiveRunProgress {
  const failedSites = progress.sites.filter((site) => site.state === 'FAILED').map((site) => site.siteId);
  const failedMonths = (progress.partitions ?? []).filter((partition) => partition.state === 'FAILED').map((partition) => partition.name);
  progress.status = failedSites.length > 0 || failedMonths.length > 0 ? 'FAILED' : 'COMPLETED';
  progress.closedAt = new Date(Date.now()).toISOString();
  if (progress.status === 'COMPLETED') return progress;
  const what = [failedSites.length > 0 ? `site(s) ${failedSites.join(', ')}` : '', failedMonths.length > 0 ? `month(s) ${failedMonths.join(', ')}` : ''];
  throw wf.ApplicationFailure.nonRetryable(`archive of ${input.logType} failed for ${what.filter(Boolean).join(' and ')}`, 'ARCHIVE_SITES_FAILED', progress);
}
