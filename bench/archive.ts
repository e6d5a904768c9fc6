/**
 * `npx tsx bench/archive.ts [--rows 1000000] [--temporal dev|cluster|both]`: seeds email log rows over 10 sites, archives them through the
 * platform (API, Temporal, the archival worker as its own process, the asset sink), and prints rows per
 * second, wall time and the worker's peak memory beside a baseline on the same data in the same run
 * (plain COPY to a file plus DELETE, bench/archive-baseline.ts). `--temporal both` measures on the dev server,
 * then on a cluster of two nodes behind its door (tokens required), one after the other.
 */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { signToken } from '../api/http/sign-token';
import { typescriptCommand } from '../scripts/platform/children';
import { BenchPlatform, BenchTemporal, benchTemporals, peakMemoryMb, ROOT, startBenchPlatform } from './support';

const SITES = 10;

async function seed(databaseUrl: string, rows: number): Promise<void> {
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
  const { values } = parseArgs({ options: { rows: { type: 'string', default: '1000000' }, temporal: { type: 'string', default: 'dev' } } });
  const rows = Number(values.rows);
  const temporals = benchTemporals(values.temporal);
  console.log(`bench/archive: ${rows} email log rows over ${SITES} sites, Temporal: ${temporals.join(', then ')}`);
  const runs: string[] = [];
  for (const temporal of temporals) {
    console.log(`Temporal ${temporal === 'dev' ? 'dev server' : 'cluster (two nodes behind the door, tokens required)'}:`);
    runs.push(await runOn(temporal, rows));
  }
  if (runs.length > 1) {
    console.log('  side by side (platform archive run):');
    for (const [index, run] of runs.entries()) console.log(`  ${temporals[index].padEnd(8)}${run}`);
  }
  process.exit(0);
}

/** One baseline and one platform run on this Temporal; answers the platform's line. */
async function runOn(temporal: BenchTemporal, rows: number): Promise<string> {
  const platform = await startBenchPlatform({ ARCHIVE_CRON: '0 3 1 1 *' }, { temporal });
  const { config, db, apiUrl } = platform;
  const cutoffNote = 'retention 30 days: every seeded row (2025) is older';
  const cutoff = new Date(Date.now() - 30 * 86400000).toISOString();

  // Baseline.
  await seed(config.databaseUrl, rows);
  const baseline = JSON.parse(execFileSync(...typescriptCommand('bench/archive-baseline.ts', [config.databaseUrl, cutoff]), { cwd: ROOT }).toString()) as {
    wallMs: number;
    rows: number;
    peakRssMb: number;
  };

  // Platform.
  await seed(config.databaseUrl, rows);
  const worker = await platform.startWorker(['archival']);
  const token = await signToken({ secret: config.jwtSecret, claims: { sub: 'bench', roles: ['ADMIN'] } });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  await fetch(`${apiUrl}/api/settings/archive-policies`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ logType: 'EMAIL_LOG', siteId: null, retentionDays: 30, enabled: true }),
  });

  const started = process.hrtime.bigint();
  const run = (await (
    await fetch(`${apiUrl}/api/settings/archive-policies/run`, { method: 'POST', headers, body: JSON.stringify({ logType: 'EMAIL_LOG' }) })
  ).json()) as { runs: { workflowId: string; runId: string }[] };
  const result = (await platform.temporal.client.workflow.getHandle(run.runs[0].workflowId, run.runs[0].runId).result()) as {
    sites: { rowsDeleted: number }[];
  };
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  const workerPeakMb = peakMemoryMb(worker.pid!);
  const archived = result.sites.reduce((sum, site) => sum + site.rowsDeleted, 0);
  const { count } = (await db('email.email_log').count({ count: '*' }).first()) as { count: number };

  const line = (name: string, ms: number, n: number, mb: number) =>
    `  ${name.padEnd(30)} ${n.toString().padStart(9)} rows  ${(ms / 1000).toFixed(2).padStart(7)} s  ${Math.round(n / (ms / 1000))
      .toString()
      .padStart(8)} rows/s  peak ${mb.toFixed(0)} MiB`;
  console.log(`(${cutoffNote}; ${os.cpus().length} cores)`);
  console.log(line('baseline COPY + DELETE', baseline.wallMs, baseline.rows, baseline.peakRssMb));
  const nodes = Object.entries(platform.clusterPeaksMb())
    .map(([name, mb]) => `, ${name} ${mb.toFixed(0)} MiB`)
    .join('');
  const platformLine = line('platform archive run', wallMs, archived, workerPeakMb) + ` (worker process${nodes})`;
  console.log(platformLine);
  console.log(`  platform / baseline wall time: ${(wallMs / baseline.wallMs).toFixed(2)}x; rows left in the table: ${count}`);
  console.log('  platform time per activity type (summed over sites; sites run two at a time):');
  for (const [name, ms] of await activityTimes(platform.temporal, run.runs[0].workflowId, run.runs[0].runId)) {
    console.log(`    ${name.padEnd(26)} ${(ms / 1000).toFixed(2).padStart(7)} s`);
  }

  await platform.stop();
  return platformLine;
}

void main();
