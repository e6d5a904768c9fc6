import { reasonOf } from '../failure-reason';
import { inLanes } from '../lanes';
import { ArchiveRun, WholeMonthsOfSite } from './archive-run';
import { PartitionProgress } from './definitions';

const monthNotStarted = (name: string): PartitionProgress => ({
  name,
  state: 'EXPORTING',
  rowsExported: 0,
  rowsDropped: 0,
  rowsReturned: 0,
  assetIds: [],
  error: null,
});

/**
 * Months an earlier run left half-way go first: a detached month's late rows are back in the log table
 * before any row-path part deletes. Their parts count as resumed.
 */
export async function finishHalfDoneMonths(run: ArchiveRun): Promise<void> {
  run.progress.partitions = [];
  for (const unfinished of await run.act.listUnfinishedPartitionArchives({ logType: run.input.logType })) {
    run.progress.resumedParts += await archiveMonth(run, unfinished);
  }
}

/** Archives whole each month that is past retention for every site in it, except a month that holds a blocked site's rows. */
export async function archiveExpiredMonths(run: ArchiveRun, blockedSites: ReadonlyMap<string, string>): Promise<void> {
  const { act, input, progress } = run;
  const expired = await act.listExpiredPartitions({ logType: input.logType, runStart: run.runStart, excludeSites: [...blockedSites.keys()] });
  for (const partition of expired) {
    const opened = await act
      .openPartitionArchive({ workflowId: run.workflowId, runId: run.runId, logType: input.logType, partition })
      .catch((error: unknown) => {
        progress.partitions!.push({ ...monthNotStarted(partition.name), state: 'FAILED', error: reasonOf(error) });
        return null;
      });
    if (opened) await archiveMonth(run, opened);
  }
}

/**
 * Archives one month whole: exported per site, every part uploaded and confirmed, the month detached,
 * recorded and dropped, with no row deleted. Answers how many parts it finished (none when it failed).
 */
async function archiveMonth(run: ArchiveRun, archive: { partitionArchiveId: string; name: string }): Promise<number> {
  const { act, input } = run;
  const month = monthNotStarted(archive.name);
  run.progress.partitions!.push(month);
  const { partitionArchiveId } = archive;
  try {
    const parts = await act.exportPartitionParts({ partitionArchiveId, maxRowsPerPart: input.maxRowsPerPart });
    month.rowsExported = parts.reduce((sum, part) => sum + part.rowCount, 0);
    month.state = 'UPLOADING';
    // Two uploads at a time; the assets are listed in the parts' order whichever finishes first.
    const assets = new Map<string, string>();
    await inLanes(
      parts,
      2,
      (part) => act.uploadPart({ partId: part.partId }),
      (part, uploaded) => assets.set(part.partId, uploaded.assetId),
    );
    month.assetIds.push(...parts.map((part) => assets.get(part.partId)!));
    month.state = 'DETACHING';
    await act.detachArchivedPartition({ partitionArchiveId });
    month.state = 'DROPPING';
    const dropped = await act.dropArchivedPartition({ partitionArchiveId });
    month.rowsDropped = dropped.rowsDropped;
    month.rowsReturned = dropped.rowsReturned;
    month.state = 'DROPPED';
    for (const part of parts) {
      const site = wholeMonthsOf(run, part.siteId);
      site.rowsExported += part.rowCount;
      site.assetIds.push(assets.get(part.partId)!);
    }
    for (const [siteId, rows] of Object.entries(dropped.bySite)) wholeMonthsOf(run, siteId).rowsDropped += rows;
    return parts.length;
  } catch (error) {
    month.state = 'FAILED';
    month.error = reasonOf(error);
    return 0;
  }
}

function wholeMonthsOf(run: ArchiveRun, siteId: string): WholeMonthsOfSite {
  if (!run.wholeMonths.has(siteId)) run.wholeMonths.set(siteId, { rowsExported: 0, rowsDropped: 0, assetIds: [] });
  return run.wholeMonths.get(siteId)!;
}
