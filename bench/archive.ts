/**
 * `npx tsx bench/archive.ts [--rows 1000000]`: seeds email log rows over 10 sites, archives them through the
 * platform (API, Temporal, the archival worker as its own process, the asset sink), and prints rows per
 * second, wall time and the worker's peak memory beside a baseline on the same data in the same run
 * (plain COPY to a file plus DELETE, bench/archive-baseline.ts).
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createApp } from '../api/app';
import { signToken } from '../api/http/sign-token';
import { loadConfig } from '../lib/config';
import { createLogger } from '../lib/logger';
import { createDb } from '../data/db';
import { createDocker } from '../data/docker';
import { createFileStorage } from '../data/assets/storage';
import { connectTemporal } from '../temporal-config/client';
import { typescriptCommand } from '../scripts/platform/children';
import { slotDatabase, slotNamespace, TEMPLATE_DATABASE, TestPlatformInfo } from '../test/support/slots';

const ROOT = path.resolve(__dirname, '..');
const SITES = 10;

function descendants(pid: number): number[] {
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const task of fs.readdirSync(`/proc/${parent}/task`)) {
      const children = fs.readFileSync(`/proc/${parent}/task/${task}/children`, 'utf8').trim();
      for (const child of children ? children.split(/\s+/).map(Number) : []) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return found;
}

/** Peak resident memory (VmHWM) of the process tree's largest process, in MiB. */
function peakMemoryMb(pid: number): number {
  let peak = 0;
  for (const p of [pid, ...descendants(pid)]) {
    const status = fs.readFileSync(`/proc/${p}/status`, 'utf8');
    const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
    peak = Math.max(peak, kb / 1024);
  }
  return peak;
}

async function seed(databaseUrl: string, rows: number): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query('truncate email.email_log restart identity');
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

async function startPlatform(): Promise<{ info: TestPlatformInfo; stop: () => void }> {
  const infoFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-bench-')), 'platform.json');
  const child = spawn(...typescriptCommand('test/support/test-platform.ts', [infoFile]), { cwd: ROOT, stdio: 'ignore' });
  while (!fs.existsSync(infoFile)) {
    if (child.exitCode !== null) throw new Error('the benchmark platform did not start');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const info = JSON.parse(fs.readFileSync(infoFile, 'utf8'));
  if (info.error) throw new Error(info.error);
  return { info, stop: () => child.kill('SIGTERM') };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rows: { type: 'string', default: '1000000' } } });
  const rows = Number(values.rows);
  console.log(`bench/archive: ${rows} email log rows over ${SITES} sites`);
  const platform = await startPlatform();
  const { info } = platform;
  const admin = new pg.Client({ connectionString: info.postgres.adminUrl });
  await admin.connect();
  await admin.query(`create database ${slotDatabase(1)} template ${TEMPLATE_DATABASE}`);
  await admin.end();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-bench-data-'));
  const env = {
    ...process.env,
    DATABASE_URL: `${info.postgres.urlPrefix}${slotDatabase(1)}`,
    TEMPORAL_ADDRESS: info.temporal.address,
    TEMPORAL_NAMESPACE: slotNamespace(1),
    TEMPORAL_UI_URL: info.temporal.uiUrl,
    DATA_DIR: dataDir,
    WORKFLOW_BUNDLE_PATH: info.workflowBundlePath,
    LOG_LEVEL: 'warn',
    ARCHIVE_CRON: '0 3 1 1 *',
  };
  const config = loadConfig(env);
  const cutoffNote = 'retention 30 days: every seeded row (2025) is older';
  const cutoff = new Date(Date.now() - 30 * 86400000).toISOString();

  // Baseline.
  await seed(config.databaseUrl, rows);
  const baseline = JSON.parse(execFileSync(...typescriptCommand('bench/archive-baseline.ts', [config.databaseUrl, cutoff]), { cwd: ROOT }).toString());

  // Platform.
  await seed(config.databaseUrl, rows);
  const db = createDb({ databaseUrl: config.databaseUrl });
  const temporal = await connectTemporal({ address: config.temporalAddress, namespace: config.temporalNamespace, uiUrl: config.temporalUiUrl });
  const app = createApp({
    config, db, temporal, docker: createDocker({ dockerHost: null }), storage: createFileStorage(path.join(dataDir, 'assets')),
    logger: createLogger({ level: 'warn', name: 'bench-api' }),
  });
  const server = http.createServer(app.koa.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const worker = spawn(...typescriptCommand('workers/main.ts', ['--queues', 'archival']), { cwd: ROOT, env: { ...env, LOG_LEVEL: 'info', API_INTERNAL_URL: apiUrl }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  worker.stdout!.on('data', (chunk) => (out += chunk));
  while (!out.includes('workers running')) await new Promise((resolve) => setTimeout(resolve, 100));
  const token = await signToken({ secret: config.jwtSecret, claims: { sub: 'bench', roles: ['ADMIN'] } });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  await fetch(`${apiUrl}/api/settings/archive-policies`, { method: 'POST', headers, body: JSON.stringify({ logType: 'EMAIL_LOG', siteId: null, retentionDays: 30, enabled: true }) });

  const started = process.hrtime.bigint();
  const run = (await (await fetch(`${apiUrl}/api/settings/archive-policies/run`, { method: 'POST', headers, body: JSON.stringify({ logType: 'EMAIL_LOG' }) })).json()) as { runs: { workflowId: string; runId: string }[] };
  const result = (await temporal.client.workflow.getHandle(run.runs[0].workflowId, run.runs[0].runId).result()) as { sites: { rowsDeleted: number }[] };
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  const workerPeakMb = peakMemoryMb(worker.pid!);
  const archived = result.sites.reduce((sum, site) => sum + site.rowsDeleted, 0);
  const { count } = (await db('email.email_log').count({ count: '*' }).first()) as { count: number };

  const line = (name: string, ms: number, n: number, mb: number) =>
    `  ${name.padEnd(30)} ${n.toString().padStart(9)} rows  ${(ms / 1000).toFixed(2).padStart(7)} s  ${Math.round(n / (ms / 1000)).toString().padStart(8)} rows/s  peak ${mb.toFixed(0)} MiB`;
  console.log(`(${cutoffNote}; ${os.cpus().length} cores)`);
  console.log(line('baseline COPY + DELETE', baseline.wallMs, baseline.rows, baseline.peakRssMb));
  console.log(line('platform archive run', wallMs, archived, workerPeakMb) + ' (worker process)');
  console.log(`  platform / baseline wall time: ${(wallMs / baseline.wallMs).toFixed(2)}x; rows left in the table: ${count}`);

  worker.kill('SIGTERM');
  server.close();
  await temporal.connection.close();
  await db.destroy();
  fs.rmSync(dataDir, { recursive: true, force: true });
  platform.stop();
  process.exit(0);
}

void main();
