import { Knex } from 'knex';
import { LogType } from '../../domain/archival';

export const PART_TABLE = 'settings.archive_part';
/** Each part's exact ids, one sorted array per part. */
export const PART_IDS_TABLE = 'settings.archive_part_ids';

export type PartState = 'EXPORTED' | 'CONFIRMED' | 'DELETED';

/** One CSV of an archive run, recorded before it is uploaded. */
export interface ArchivePartRow {
  id: string;
  workflow_id: string;
  run_id: string;
  log_type: LogType;
  site_id: string;
  cutoff: Date;
  part_no: number;
  file_name: string;
  row_count: number;
  min_id: number;
  max_id: number;
  size_bytes: number;
  sha256: string;
  state: PartState;
  asset_id: string | null;
  rows_deleted: number;
  error: string | null;
}

export async function findPart(db: Knex, partId: string): Promise<ArchivePartRow> {
  const part = (await db(PART_TABLE).where({ id: partId }).first()) as ArchivePartRow | undefined;
  if (!part) throw new Error(`archive part ${partId} is not in the manifest`);
  return part;
}
