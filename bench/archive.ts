/**
 * `npx tsx bench/archive.ts [--rows 1000000] [--path both|partitions|rows] [--format csv|parquet|both] [--temporal dev|cluster|both] [--cpu]`: seeds
 * email log rows over 10 sites, archives them through the platform (API, Temporal, the archival worker as its
 * own process, the asset sink), and prints rows per second, wall time and the worker's peak memory beside
 * baselines on the same data in the same run (bench/archive-baseline.ts):
 * - the partition path (every seeded month past retention for every site: archived whole and dropped)
 *   beside plain COPY to a file plus DETACH and DROP of each month;
 * - the row path (one row a month of an eleventh site whose policy keeps ten years, so no month goes whole)
 *   beside plain COPY to a file plus DELETE.
 * `--format` is the archive files' format (the global policy's); `both` runs each path in CSV, then in
 * Parquet, and prints the Parquet archive's size as a share of the CSV's, last.
 * `--temporal both` measures on the dev server, then on a cluster of two nodes behind its door (tokens
 * required), one after the other. `--cpu` prints each process's CPU seconds over the platform's run (Linux, /proc);
 * `--statements` the twelve statements that took PostgreSQL longest over it, from pg_stat_statements (the database's own).
 */
// First: with --tracing, the SDK patches `pg` and `http` as they load.
import { tracingLine } from './tracing';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { signToken } from '../api/http/sign-token';
import { typescriptCommand } from '../scripts/platform/children';
import { BenchPlatform, BenchTemporal, benchTemporals, cpuBetween, peakMemoryMb, processCpuTicks, ROOT, startBenchPlatform } from './support';

const SITES = 10;

/** The eleventh site of the row path: one row a month, kept ten years, so that no month is past retention whole. */
const KEEPER = 'site-keep';

async function seed(databaseUrl: string, rows: number, keeper: boolean): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query('truncate email.email_log restart identity');
  // The log is partitioned by month: the seeded months get theirs first.
  await client.query(
    `select settings.ensure_log_partitions('email.email_log', date '2025-01-01', (timestamptz '2025-01-01 00:00:00+00' + $1 * interval '1.000001 second')::date)`,
    [rows],
  );
  await client.query(
    `insert into email.email_log (site_id, created_at, updated_at, recipient, locale, subject, status, attempts, missing_variables, variables)
     select 'site-' || (g % ${SITES}), timestamptz '2025-01-01 00:00:00.000001+00' + g * interval '1.000001 second',
            timestamptz '2025-01-01 00:00:00+00' + g * interval '1 second',
            'user' || g || '@example.test', case when g % 2 = 0 then 'en' else 'ar' end,
            'Monthly report, "quoted" #' || g, 'SUCCESS', 1, '[]'::jsonb, jsonb_build_object('n', g, 'name', 'User ' || g)
     from generate_series(1, $1) g`,
    [rows],
  );
  if (keeper) {
    await client.query(
      `insert into email.email_log (site_id, created_at, updated_at, recipient, status, attempts)
       select '${KEEPER}', m + interval '1 day', m + interval '1 day', 'keep@example.test', 'SUCCESS', 1
       from generate_series(date '2025-01-01', (timestamptz '2025-01-01 00:00:00+00' + $1 * interval '1.000001 second')::date, interval '1 month') m`,
      [rows],
    );
  }
  await client.query('vacuum analyze email.email_log');
  await client.end();
}

/** Scheduled-to-completed time of each activity of the run, summed by activity type, from its history. */
async function activityTimes(temporal: BenchPlatform['temporal'], workflowId: string, runId: string): Promise<Array<[string, number]>> {
  const history = await temporal.client.workflow.getHandle(workflowId, runId).fetchHistory();
  const millis = (time: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(time?.seconds ?? 0) * 1000 + (time?.nanos ?? 0) / 1e6;
  const scheduled = new Map<string, { name: string; at: number }>();
  const totals = new Map<string, number>();
  for (const event of history.events ?? []) {
    const attributes = event.activityTaskScheduledEventAttributes;
    if (attributes) scheduled.set(String(event.eventId), { name: attributes.activityType?.name ?? '?', at: millis(event.eventTime) });
    const completed = event.activityTaskCompletedEventAttributes;
    const start = completed && scheduled.get(String(completed.scheduledEventId));
    if (start) totals.set(start.name, (totals.get(start.name) ?? 0) + millis(event.eventTime) - start.at);
  }
  return [...totals].sort((a, b) => b[1] - a[1]);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      tracing: { type: 'boolean', default: false },
      rows: { type: 'string', default: '1000000' },
      temporal: { type: 'string', default: 'dev' },
      path: { type: 'string', default: 'both' },
      format: { type: 'string', default: 'csv' },
      cpu: { type: 'boolean', default: false },
      statements: { type: 'boolean', default: false },
    },
  });
  const formats = (values.format === 'both' ? ['csv', 'parquet'] : [values.format]) as ArchiveFormat[];
  if (!formats.every((one) => one === 'csv' || one === 'parquet')) throw new Error('--format is csv, parquet or both');
  const rows = Number(values.rows);
  const paths = (values.path === 'both' ? ['partitions', 'rows'] : [values.path]) as ArchivePath[];
  if (!paths.every((one) => one === 'partitions' || one === 'rows')) throw new Error('--path is both, partitions or rows');
  const temporals = benchTemporals(values.temporal);
  console.log(`bench/archive: ${rows} email log rows over ${SITES} sites, Temporal: ${temporals.join(', then ')}`);
  console.log(tracingLine());
  const runs: string[] = [];
  const archiveBytes = new Map<string, number>();
  for (const temporal of temporals) {
    console.log(`Temporal ${temporal === 'dev' ? 'dev server' : 'cluster (two nodes behind the door, tokens required)'}:`);
    for (const path of paths)
      for (const format of formats) {
        const run = await runOn(temporal, rows, path, format, { cpu: values.cpu, statements: values.statements });
        runs.push(run.line);
        archiveBytes.set(`${temporal} ${path} ${format}`, run.archiveBytes);
      }
  }
  if (runs.length > 1) {
    console.log('  side by side (platform archive run):');
    for (const run of runs) console.log(run);
  }
  for (const temporal of temporals)
    for (const path of paths) {
      const csv = archiveBytes.get(`${temporal} ${path} csv`);
      const parquet = archiveBytes.get(`${temporal} ${path} parquet`);
      if (csv && parquet)
        console.log(`  archive size, ${path} path: Parquet+zstd ${parquet} bytes / CSV ${csv} bytes = ${((100 * parquet) / csv).toFixed(1)}%`);
    }
  process.exit(0);
}

type ArchivePath = 'partitions' | 'rows';
type ArchiveFormat = 'csv' | 'parquet';

/** One baseline and one platform run of one path on this Temporal; answers the platform's line. */
async function runOn(
  temporal: BenchTemporal,
  rows: number,
  path: ArchivePath,
  format: ArchiveFormat,
  show: { cpu: boolean; statements: boolean },
): Promise<{ line: string; archiveBytes: number }> {
  const platform = await startBenchPlatform({ ARCHIVE_CRON: '0 3 1 1 *' }, { temporal });
  const { config, db, apiUrl } = platform;
  const keeper = path === 'rows';
  const cutoffNote = `${path} path, ${format}; retention 30 days: every seeded row (2025) is older${keeper ? `, but ${KEEPER} keeps ten years` : ''}`;
  const cutoff = new Date(Date.now() - 30 * 86400000).toISOString();
  const baselineName = keeper ? 'baseline COPY + DELETE' : 'baseline COPY + DETACH + DROP';

  // Baseline (the keeper's rows are not archived by it either: it copies and deletes only the ten sites').
  await seed(config.databaseUrl, rows, false);
  const baseline = JSON.parse(
    execFileSync(...typescriptCommand('bench/archive-baseline.ts', [config.databaseUrl, cutoff, keeper ? 'delete' : 'drop']), { cwd: ROOT }).toString(),
  ) as {
    wallMs: number;
    rows: number;
    peakRssMb: number;
  };

  // Platform.
  await seed(config.databaseUrl, rows, keeper);
  const worker = await platform.startWorker(['archival']);
  const token = await signToken({ secret: config.identity.jwtSecret, claims: { sub: 'bench', roles: ['ADMIN'] } });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  await fetch(`${apiUrl}/api/settings/archive-policies`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ logType: 'EMAIL_LOG', siteId: null, retentionDays: 30, enabled: true, format }),
  });
  if (keeper) {
    await fetch(`${apiUrl}/api/settings/archive-policies`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ logType: 'EMAIL_LOG', siteId: KEEPER, retentionDays: 3650, enabled: true }),
    });
  }

  if (show.statements) {
    await db.raw('create extension if not exists pg_stat_statements');
    await db.raw('select pg_stat_statements_reset()');
  }
  const cpuBefore = processCpuTicks();
  const started = process.hrtime.bigint();
  const run = (await (
    await fetch(`${apiUrl}/api/settings/archive-policies/run`, { method: 'POST', headers, body: JSON.stringify({ logType: 'EMAIL_LOG' }) })
  ).json()) as { runs: { workflowId: string; runId: string }[] };
  const result = (await platform.temporal.client.workflow.getHandle(run.runs[0].workflowId, run.runs[0].runId).result()) as {
    sites: { rowsDeleted: number }[];
    partitions?: { state: string }[];
  };
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  const cpuAfter = processCpuTicks();
  const workerPeakMb = peakMemoryMb(worker.pid!);
  const archived = result.sites.reduce((sum, site) => sum + site.rowsDeleted, 0);
  const { count } = (await db('email.email_log').count({ count: '*' }).first()) as { count: number };

  const line = (name: string, ms: number, n: number, mb: number) =>
    `  ${name.padEnd(30)} ${n.toString().padStart(9)} rows  ${(ms / 1000).toFixed(2).padStart(7)} s  ${Math.round(n / (ms / 1000))
      .toString()
      .padStart(8)} rows/s  peak ${mb.toFixed(0)} MiB`;
  console.log(`(${cutoffNote}; ${os.cpus().length} cores)`);
  console.log(line(baselineName, baseline.wallMs, baseline.rows, baseline.peakRssMb));
  const nodes = Object.entries(platform.clusterPeaksMb())
    .map(([name, mb]) => `, ${name} ${mb.toFixed(0)} MiB`)
    .join('');
  const platformLine = line(`platform, ${path} path, ${format}`, wallMs, archived, workerPeakMb) + ` (worker process${nodes})`;
  const dropped = (result.partitions ?? []).filter((month) => month.state === 'DROPPED').length;
  console.log(platformLine);
  const { bytes } = (await db('assets.asset').where({ folder: '/archive' }).sum({ bytes: 'size_bytes' }).first()) as { bytes: string | null };
  const archiveBytes = Number(bytes ?? 0);
  console.log(`  months dropped whole: ${dropped}; rows left in the table: ${count}${keeper ? ` (${KEEPER}'s)` : ''}; archive files: ${archiveBytes} bytes`);
  console.log(`  platform / ${baselineName.replace('baseline ', '')} wall time: ${(wallMs / baseline.wallMs).toFixed(2)}x`);
  console.log('  platform time per activity type (summed over sites; sites run two at a time):');
  for (const [name, ms] of await activityTimes(platform.temporal, run.runs[0].workflowId, run.runs[0].runId)) {
    console.log(`    ${name.padEnd(26)} ${(ms / 1000).toFixed(2).padStart(7)} s`);
  }
  if (show.cpu) {
    console.log('  CPU seconds over the platform run, by process:');
    for (const cpuLine of cpuBetween(cpuBefore, cpuAfter)) console.log(`    ${cpuLine}`);
  }
  if (show.statements) {
    // Of this database only: Temporal's dev server keeps its own store, a cluster its own databases. The COPYs
    // (one per site and month) are summed in one line, so the statements around them show.
    const { rows: statements } = (await db.raw(
      `select sum(calls)::int as calls, sum(total_exec_time) as ms, query
         from (select calls, total_exec_time,
                      case when query like 'COPY (%' then 'COPY (…) TO STDOUT, every export' else regexp_replace(query, '\\s+', ' ', 'g') end as query
                 from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())) s
        group by query order by 2 desc limit 12`,
    )) as { rows: Array<{ calls: number; ms: number; query: string }> };
    console.log('  statements that took PostgreSQL longest over the platform run (total, calls):');
    for (const statement of statements)
      console.log(`    ${(statement.ms / 1000).toFixed(2).padStart(7)} s ${String(statement.calls).padStart(6)}x  ${statement.query.slice(0, 150)}`);
  }

  await platform.stop();
  return {
    line: `  ${temporal.padEnd(8)}${platformLine.trimStart()}  ${(wallMs / baseline.wallMs).toFixed(2)}x of ${baselineName.replace('baseline ', '')}`,
    archiveBytes,
  };
}

void main();
