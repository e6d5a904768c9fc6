import crypto from 'node:crypto';
import { log } from '@temporalio/activity';
import fs from 'node:fs';
import { csvToParquet, parquetToCsv, rowGroupRowsFor } from '../../adapters/archival/parquet';
import { sha256OfFile } from '../../data/assets/storage';
import { csvHeaderColumns } from '../../data/archival/csv-parts';
import { PartEncoding } from '../../data/archival/part-files';
import { EncoderSettings } from '../../data/archival/parts';
import { resolveArchiveFormat } from '../../data/archival/policies';
import { ArchiveFormat, LogType } from '../../domain/archival';
import { ArchivalDeps } from './deps';

/**
 * A part's CSV as Parquet (zstd), then read back to CSV, which must hash exactly as the part's CSV did: the
 * rows deleted are the CSV's, so the Parquet file is proven to hold them before it is recorded. The CSV is
 * then removed. A CSV DuckDB cannot convert (a record over its line limit, or too little memory) or that does not read back
 * the same is kept as it is: the part stays CSV (its rows archived all the same), and the reason is logged.
 */
const PARQUET: PartEncoding = {
  format: 'parquet',
  encode: async (csv, target, recorded) => {
    const temporary = `${target}.${crypto.randomUUID()}.tmp`;
    const readBack = `${temporary}.csv`;
    try {
      const rowGroupRows = recordedRowGroupRows(recorded) ?? (await rowGroupRowsFor(csv.file, csv.rowCount, recorded === null ? 'first' : 'current'));
      await csvToParquet({ csvFile: csv.file, columns: await csvHeaderColumns(csv.file), rowGroupRows, parquetFile: temporary });
      await parquetToCsv(temporary, readBack);
      const { sha256 } = await sha256OfFile(readBack);
      if (sha256 !== csv.sha256) throw new Error(`the Parquet file reads back to a CSV hashing ${sha256}, not the part's ${csv.sha256}`);
      await fs.promises.rename(temporary, target);
      await fs.promises.rm(csv.file, { force: true });
      return { ...(await sha256OfFile(target)), settings: { rowGroupRows } };
    } catch (error) {
      log.warn('a part is kept as CSV: it could not be written as Parquet', { file: csv.file, error: error instanceof Error ? error.message : String(error) });
      return null;
    } finally {
      await fs.promises.rm(temporary, { force: true });
      await fs.promises.rm(readBack, { force: true });
    }
  },
};

/** The rows per row group a part was recorded with, if any; settings no rule gives are refused, not replaced. */
function recordedRowGroupRows(recorded: EncoderSettings | null | undefined): number | undefined {
  if (!recorded) return undefined;
  const rows = recorded.rowGroupRows;
  if (typeof rows !== 'number' || !Number.isInteger(rows) || rows < 1024 || rows > 65536)
    throw new Error(`the part's recorded encoder settings are unusable: ${JSON.stringify(recorded)}`);
  return rows;
}

/** How a part's CSV becomes a file of `format`: none for CSV itself. */
export function encodingFor(format: ArchiveFormat): PartEncoding | undefined {
  return format === 'parquet' ? PARQUET : undefined;
}

/** The encoding of a site's new parts, by its policy's format (else the global policy's, else ARCHIVE_FORMAT). */
export async function siteEncoding({ db, config }: ArchivalDeps, args: { logType: LogType; siteId: string }): Promise<PartEncoding | undefined> {
  return encodingFor(await resolveArchiveFormat(db, { ...args, fallback: config.archive.format }));
}
