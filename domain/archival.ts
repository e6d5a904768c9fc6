/** The archival vocabulary every layer shares: log types, the archive folder, archive file names. Imports nothing. */
export const LOG_TYPES = ['SCHEDULER_JOB_LOG', 'EMAIL_LOG', 'INTEGRATION_LOG'] as const;
export type LogType = (typeof LOG_TYPES)[number];

/** Archive files: `{log_type}_{cutoff as YYYYMMDDTHHmmssZ}_{part, 3 digits}.csv`. */
export function archiveFileName(logType: LogType, cutoff: Date, partNo: number): string {
  const stamp = cutoff.toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '');
  return `${logType.toLowerCase()}_${stamp}_${String(partNo).padStart(3, '0')}.csv`;
}

export const ARCHIVE_FOLDER = '/archive';
export const MAX_ROWS_PER_PART = 1_000_000;
