/**
 * The archive benchmark's baselines, each in a process of its own so its peak memory is its own, through `pg`:
 * - `delete`: per site, plain `COPY (SELECT …) TO STDOUT WITH (FORMAT csv, HEADER true)` to a file, then one `DELETE`;
 * - `drop`: per month partition that ended before the cutoff, the same COPY of each site's rows of that month,
 *   then `DETACH PARTITION … CONCURRENTLY` and `DROP TABLE`.
 * `tsx bench/archive-baseline.ts <databaseUrl> <cutoff> [delete|drop]`. Prints one JSON line: { wallMs, rows, peakRssMb }.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';

const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;

/** COPYs a query's rows to a file; answers how many. */
async function copyToFile(client: pg.Client, select: string, file: string): Promise<number> {
  const stream = client.query(copyTo(`COPY (${select}) TO STDOUT WITH (FORMAT csv, HEADER true)`));
  await pipeline(stream, fs.createWriteStream(file));
  return stream.rowCount;
}

async function copyAndDelete(client: pg.Client, dir: string, cutoff: string): Promise<number> {
  const { rows: sites } = await client.query<{ site_id: string }>('select distinct site_id from email.email_log order by site_id');
  let rows = 0;
  for (const { site_id: siteId } of sites) {
    await copyToFile(
      client,
      `select * from email.email_log where site_id = ${literal(siteId)} and created_at < ${literal(cutoff)} order by id`,
      path.join(dir, `${siteId}.csv`),
    );
    const deleted = await client.query('delete from email.email_log where site_id = $1 and created_at < $2', [siteId, cutoff]);
    rows += deleted.rowCount ?? 0;
  }
  return rows;
}

async function copyAndDrop(client: pg.Client, dir: string, cutoff: string): Promise<number> {
  const { rows: months } = await client.query<{ name: string }>(
    `select format('%I.%I', n.nspname, c.relname) as name
     from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_namespace n on n.oid = c.relnamespace
     where i.inhparent = 'email.email_log'::regclass
       and (regexp_match(pg_get_expr(c.relpartbound, c.oid), $$TO \\('([^']+)'\\)$$))[1]::timestamptz <= $1
     order by 1`,
    [cutoff],
  );
  let rows = 0;
  for (const { name } of months) {
    const { rows: sites } = await client.query<{ site_id: string }>(`select distinct site_id from ${name} order by site_id`);
    for (const { site_id: siteId } of sites) {
      rows += await copyToFile(client, `select * from ${name} where site_id = ${literal(siteId)} order by id`, path.join(dir, `${name}-${siteId}.csv`));
    }
    await client.query(`alter table email.email_log detach partition ${name} concurrently`);
    await client.query(`drop table ${name}`);
  }
  return rows;
}

async function main(): Promise<void> {
  const [databaseUrl, cutoff, mode = 'delete'] = process.argv.slice(2);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query("set timezone = 'UTC'");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-bench-baseline-'));
  const started = process.hrtime.bigint();
  const rows = mode === 'drop' ? await copyAndDrop(client, dir, cutoff) : await copyAndDelete(client, dir, cutoff);
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  await client.end();
  fs.rmSync(dir, { recursive: true, force: true });
  console.log(JSON.stringify({ wallMs, rows, peakRssMb: process.resourceUsage().maxRSS / 1024 }));
}

void main();
