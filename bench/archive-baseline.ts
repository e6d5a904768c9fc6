/**
 * The archive benchmark's baseline, in a process of its own so its peak memory is its own: per site, plain
 * `COPY (SELECT …) TO STDOUT WITH (FORMAT csv, HEADER true)` to a file, then one `DELETE`, through `pg`.
 * Prints one JSON line: { wallMs, rows, peakRssMb }.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';

async function main(): Promise<void> {
  const [databaseUrl, cutoff] = process.argv.slice(2);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query("set timezone = 'UTC'");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-bench-baseline-'));
  const started = process.hrtime.bigint();
  const { rows: sites } = await client.query<{ site_id: string }>('select distinct site_id from email.email_log order by site_id');
  let rows = 0;
  for (const { site_id: siteId } of sites) {
    const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;
    await pipeline(
      client.query(
        copyTo(
          `COPY (select * from email.email_log where site_id = ${literal(siteId)} and created_at < ${literal(cutoff)} order by id) TO STDOUT WITH (FORMAT csv, HEADER true)`,
        ),
      ),
      fs.createWriteStream(path.join(dir, `${siteId}.csv`)),
    );
    const deleted = await client.query('delete from email.email_log where site_id = $1 and created_at < $2', [siteId, cutoff]);
    rows += deleted.rowCount ?? 0;
  }
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  await client.end();
  fs.rmSync(dir, { recursive: true, force: true });
  console.log(JSON.stringify({ wallMs, rows, peakRssMb: process.resourceUsage().maxRSS / 1024 }));
}

void main();
