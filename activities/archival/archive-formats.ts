import fs from 'node:fs';
import { csvToParquet } from '../../adapters/archival/parquet';
import { PartEncoding } from '../../data/archival/part-files';
import { resolveArchiveFormat } from '../../data/archival/policies';
import { ArchiveFormat, LogType } from '../../domain/archival';
import { ArchivalDeps } from './deps';

/** A part's CSV as Parquet (zstd), the CSV removed once the Parquet file is whole. */
const PARQUET: PartEncoding = {
  format: 'parquet',
  encode: async (csvFile, target) => {
    const temporary = `${target}.tmp`;
    const written = await csvToParquet(csvFile, temporary);
    await fs.promises.rename(temporary, target);
    await fs.promises.rm(csvFile, { force: true });
    return written;
  },
};

/** How a part's CSV becomes a file of `format`: none for CSV itself. */
export function encodingFor(format: ArchiveFormat): PartEncoding | undefined {
  return format === 'parquet' ? PARQUET : undefined;
}

/** The encoding of a site's new parts, by its policy's format (else the global policy's, else ARCHIVE_FORMAT). */
export async function siteEncoding({ db, config }: ArchivalDeps, args: { logType: LogType; siteId: string }): Promise<PartEncoding | undefined> {
  return encodingFor(await resolveArchiveFormat(db, { ...args, fallback: config.archiveFormat }));
}
