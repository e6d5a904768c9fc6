/** Partition-drop archival's manifest (migration 030): one row per log-table month archived whole. */
export const PARTITION_ARCHIVE_TABLE = 'settings.archive_partition';
