import { defineQuery } from '@temporalio/workflow';
import { LogType } from '../../domain/archival';

/** The archive workflows' contract between the API, the workers and the Web UI: ids, inputs, progress. */
/** One archive run per log type at a time: the id is the lock. */
export const archiveRunWorkflowId = (logType: LogType) => `archive:${logType}`;
export const archiveScheduleId = (logType: LogType) => `archive-schedule:${logType}`;

export interface ArchiveRunInput {
  logType: LogType;
  /** Only this site; all sites with rows when absent. */
  siteId?: string;
  /** Count what would be archived and change nothing. */
  dryRun?: boolean;
  /** How long an export, upload or delete may go without a heartbeat before it is retried elsewhere. */
  heartbeatTimeout?: string;
  /** Rows per CSV part (default and maximum 1,000,000). */
  maxRowsPerPart?: number;
  /** How many sites are archived at once (default 2). */
  siteConcurrency?: number;
}

export type SiteState = 'PENDING' | 'SKIPPED' | 'EXPORTING' | 'UPLOADING' | 'DELETING' | 'DONE' | 'DRY_RUN' | 'FAILED';

export interface SiteProgress {
  siteId: string;
  cutoff: string | null;
  rowsExported: number;
  rowsDeleted: number;
  /** The asset of the site's first part; `assetIds` lists all of them. */
  assetId: string | null;
  assetIds: string[];
  state: SiteState;
  error: string | null;
}

export type RunStatus = 'RUNNING' | 'COMPLETED' | 'FAILED';

export type PartitionState = 'EXPORTING' | 'UPLOADING' | 'DETACHING' | 'DROPPING' | 'DROPPED' | 'FAILED';

/** A log-table month past retention for every site in it, archived whole and dropped (no row deleted). */
export interface PartitionProgress {
  name: string;
  state: PartitionState;
  rowsExported: number;
  rowsDropped: number;
  /** Rows written to the month after its export, put back into the log table for the row path. */
  rowsReturned: number;
  assetIds: string[];
  error: string | null;
}

export interface ArchiveRunProgress {
  workflowId: string;
  logType: LogType;
  dryRun: boolean;
  status: RunStatus;
  startedAt: string;
  closedAt: string | null;
  /** Parts left by earlier runs that this run finished first. */
  resumedParts: number;
  /** Months archived whole (earlier runs' unfinished ones first); absent in runs from before partition drops. */
  partitions?: PartitionProgress[];
  sites: SiteProgress[];
}

export const archiveProgressQuery = defineQuery<ArchiveRunProgress>('progress');

export interface ScheduledArchiveInput {
  logType: LogType;
}

/** The archive run's type, as the API starts it: by name, without loading workflow code. */
export const ARCHIVE_RUN_WORKFLOW = 'archiveLogs';
export type ArchiveRunWorkflow = (input: ArchiveRunInput) => Promise<ArchiveRunProgress>;

/** One restore of an archive file at a time; a second, once the first has closed, inserts nothing. */
export const archiveRestoreWorkflowId = (assetId: string) => `archive-restore:${assetId}`;

export interface ArchiveRestoreInput {
  assetId: string;
  /** Who asked, for the job log. */
  requestedBy: string;
}

export interface ArchiveRestoreReport {
  workflowId: string;
  assetId: string;
  status: RunStatus;
  /** What the archive run's manifest says of the file; null until the restore has read it. */
  logType: LogType | null;
  siteId: string | null;
  fileName: string | null;
  rowsInFile: number;
  rowsInserted: number;
  /** Rows of the file whose id the table has already: a second restore skips them all. */
  rowsSkipped: number;
  error: string | null;
  startedAt: string;
  closedAt: string | null;
}

/** A restore's report before it has read its file: nothing known of the file, nothing counted. */
export function restoreNotYetRead(workflowId: string, assetId: string): Omit<ArchiveRestoreReport, 'status' | 'startedAt' | 'closedAt'> {
  return { workflowId, assetId, logType: null, siteId: null, fileName: null, rowsInFile: 0, rowsInserted: 0, rowsSkipped: 0, error: null };
}

export const restoreProgressQuery = defineQuery<ArchiveRestoreReport>('restore-progress');

export const ARCHIVE_RESTORE_WORKFLOW = 'restoreArchive';
export type ArchiveRestoreWorkflow = (input: ArchiveRestoreInput) => Promise<ArchiveRestoreReport>;
