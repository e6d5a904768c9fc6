import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { encodingFor } from './archive-formats';

/**
 * A Parquet part is written again, after its staged file is lost, with the settings recorded for it: the
 * same CSV and settings give the same bytes, and other settings give other bytes (so a changed default would
 * fail the part's sha256 gate if the recorded ones were not used).
 */
const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-parquet-'));
afterAll(() => fs.rmSync(folder, { recursive: true, force: true }));

/** A CSV as PostgreSQL's COPY writes it (header, NULL as an empty unquoted field), 3,000 rows. */
function writeCsv(name: string): { file: string; sha256: string; rowCount: number } {
  const lines = ['id,site_id,subject'];
  for (let n = 1; n <= 3000; n++) lines.push(`${n},site-${n % 3},${n % 7 === 0 ? '' : `"تقرير ""${n}"""`}`);
  const file = path.join(folder, `${name}.csv`);
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return { file, sha256: crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex'), rowCount: 3000 };
}

async function rowGroupsOf(file: string): Promise<number> {
  const duck = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
  const connection = await duck.connect();
  try {
    const read = await connection.runAndReadAll(`select count(distinct row_group_id)::integer as n from parquet_metadata('${file}')`);
    return (read.getRowObjects()[0] as { n: number }).n;
  } finally {
    connection.closeSync();
    duck.closeSync();
  }
}

test('a Parquet part is encoded again with the row groups recorded for it, to the same bytes; other row groups give other bytes', async () => {
  const parquet = encodingFor('parquet')!;
  const fresh = await parquet.encode(writeCsv('fresh'), path.join(folder, 'fresh.parquet'));
  expect(fresh?.settings).toEqual({ rowGroupRows: 65536 });
  expect(await rowGroupsOf(path.join(folder, 'fresh.parquet'))).toBe(1);

  const small = await parquet.encode(writeCsv('small'), path.join(folder, 'small.parquet'), { rowGroupRows: 1024 });
  expect(small?.settings).toEqual({ rowGroupRows: 1024 });
  // DuckDB fills row groups by its vectors of 2,048 rows: 3,000 rows in groups of 1,024 asked make two.
  expect(await rowGroupsOf(path.join(folder, 'small.parquet'))).toBe(2);
  expect(small?.sha256).not.toBe(fresh?.sha256);

  const again = await parquet.encode(writeCsv('again'), path.join(folder, 'again.parquet'), { rowGroupRows: 1024 });
  expect(again).toEqual(small);
});
