import { Knex } from 'knex';

export const ARCHIVE_DELETION_TABLE = 'assets.archive_deletion';

/**
 * Keeps, in the delete's own transaction, who deleted an archive file, when, from which run and how many
 * rows it held (from the archive run's manifest; null for a file no manifest names).
 */
export async function recordArchiveDeletion(
  trx: Knex,
  args: { asset: { id: string; site_id: string; name: string; sha256: string }; deletedBy: { id: string; name: string | null } },
): Promise<void> {
  const part = (await trx('settings.archive_part')
    .where({ asset_id: args.asset.id })
    .orderBy('created_at')
    .first('log_type', 'workflow_id', 'run_id', 'row_count')) as
    { log_type: string; workflow_id: string; run_id: string; row_count: number | string } | undefined;
  await trx(ARCHIVE_DELETION_TABLE).insert({
    asset_id: args.asset.id,
    site_id: args.asset.site_id,
    file_name: args.asset.name,
    sha256: args.asset.sha256,
    log_type: part?.log_type ?? null,
    workflow_id: part?.workflow_id ?? null,
    run_id: part?.run_id ?? null,
    row_count: part ? Number(part.row_count) : null,
    deleted_by: args.deletedBy.id,
    deleted_by_name: args.deletedBy.name,
  });
}
