import { MAX_ROWS_PER_PART, retentionCutoff } from '../../domain/archival';
import { reasonOf } from '../failure-reason';
import { inLanes } from '../lanes';
import { ArchiveRun, logSite } from './archive-run';
import { SiteProgress } from './definitions';

/**
 * The sites of the run: those with rows to archive, those an earlier run's part blocks, and those whose
 * rows went with a whole month, each starting from what the months took of it.
 */
export async function sitesOfRun(run: ArchiveRun, blockedSites: ReadonlyMap<string, string>): Promise<SiteProgress[]> {
  const siteIds = await run.act.listSitesWithRows({ logType: run.input.logType, siteId: run.input.siteId });
  for (const blocked of blockedSites.keys()) if (!siteIds.includes(blocked)) siteIds.push(blocked);
  for (const siteId of run.wholeMonths.keys()) if (!siteIds.includes(siteId)) siteIds.push(siteId);
  return siteIds.map((siteId) => {
    const whole = run.wholeMonths.get(siteId);
    return {
      siteId,
      cutoff: null,
      rowsExported: whole?.rowsExported ?? 0,
      rowsDeleted: whole?.rowsDropped ?? 0,
      assetId: whole?.assetIds[0] ?? null,
      assetIds: [...(whole?.assetIds ?? [])],
      state: 'PENDING',
      error: null,
    };
  });
}

/** A few sites at a time: one site's export overlaps another's upload and delete. A blocked site fails. */
export function archiveEverySite(run: ArchiveRun, blockedSites: ReadonlyMap<string, string>): Promise<void> {
  return inLanes(run.progress.sites, run.input.siteConcurrency ?? 2, (site) => {
    const blocked = blockedSites.get(site.siteId);
    if (!blocked) return archiveSite(run, site);
    site.state = 'FAILED';
    site.error = blocked;
    if (run.logEverySite) return logSite(run, site, 'FAILED', blocked);
  });
}

/**
 * Resolves the site's retention, exports the rows older than the cutoff (every part recorded before any
 * upload), uploads each part and waits for the sink's confirmation, and only then deletes exactly the
 * exported rows. A failure deletes nothing unconfirmed and is recorded on the site.
 */
async function archiveSite(run: ArchiveRun, site: SiteProgress): Promise<void> {
  const { act, input } = run;
  const retention = await act.resolveSiteRetention({ logType: input.logType, siteId: site.siteId });
  if (!retention.enabled || retention.retentionDays === null) {
    site.state = 'SKIPPED';
    const why = retention.source === 'NONE' ? 'no retention policy applies to the site' : `the ${retention.source.toLowerCase()} retention policy is disabled`;
    if (run.logEverySite) await logSite(run, site, 'SKIPPED', why);
    return;
  }
  const cutoff = retentionCutoff(run.runStart, retention.retentionDays).toISOString();
  site.cutoff = cutoff;
  if (input.dryRun) {
    site.rowsExported = await act.countArchivable({ logType: input.logType, siteId: site.siteId, cutoff });
    site.state = 'DRY_RUN';
    if (run.logEverySite) await logSite(run, site, 'DRY_RUN', null);
    return;
  }
  try {
    site.state = 'EXPORTING';
    const parts = await act.exportSiteParts({
      workflowId: run.workflowId,
      runId: run.runId,
      logType: input.logType,
      siteId: site.siteId,
      cutoff,
      maxRowsPerPart: Math.min(input.maxRowsPerPart ?? MAX_ROWS_PER_PART, MAX_ROWS_PER_PART),
    });
    site.rowsExported += parts.reduce((sum, part) => sum + part.rowCount, 0);
    site.state = 'UPLOADING';
    for (const part of parts) {
      const uploaded = await act.uploadPart({ partId: part.partId });
      site.assetIds.push(uploaded.assetId);
      site.assetId ??= uploaded.assetId;
    }
    site.state = 'DELETING';
    for (const part of parts) site.rowsDeleted += (await act.deleteArchivedRows({ partId: part.partId })).rowsDeleted;
    site.state = 'DONE';
  } catch (error) {
    site.state = 'FAILED';
    site.error = reasonOf(error);
  }
  if (run.logEverySite || site.rowsExported > 0 || site.state === 'FAILED') {
    await logSite(run, site, site.state === 'DONE' ? 'SUCCESS' : 'FAILED', site.error);
  }
}
