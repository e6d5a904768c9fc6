import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { copyCsvParts, takeIdsLiteral } from '../data/archival/csv-parts';
import { startBenchPlatform } from './support';

async function main() {
  const platform = await startBenchPlatform({ ARCHIVE_CRON: '0 3 1 1 *' });
  const url = platform.config.databaseUrl;
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const rows = 2500000;
  await c.query(`select settings.ensure_log_partitions('email.email_log', date '2025-01-01', date '2025-01-20')`);
  await c.query(
    `insert into email.email_log (site_id, created_at, updated_at, recipient, locale, subject, status, attempts, missing_variables, variables)
     select 'site-' || (g % 10), timestamptz '2025-01-01 00:00:00.000001+00' + g * interval '1.000001 second',
            timestamptz '2025-01-01 00:00:00+00' + g * interval '1 second',
            'user' || g || '@example.test', case when g % 2 = 0 then 'en' else 'ar' end,
            'Monthly report, "quoted" #' || g, 'SUCCESS', 1, '[]'::jsonb, jsonb_build_object('n', g, 'name', 'User ' || g)
     from generate_series(1, $1) g`,
    [rows],
  );
  await c.query('vacuum analyze email.email_log');
  const t = 'email.email_log_p202501';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'exp-var-'));
  const variants: Record<string, { lanes: number; settings: string[] }> = {
    'baseline-like 1 lane default': { lanes: 1, settings: [] },
    '2 lanes default': { lanes: 2, settings: [] },
    '2 lanes work_mem 64MB': { lanes: 2, settings: ["set local work_mem = '64MB'"] },
    '2 lanes no parallel': { lanes: 2, settings: ['set local max_parallel_workers_per_gather = 0'] },
    '2 lanes no parallel wm64': { lanes: 2, settings: ['set local max_parallel_workers_per_gather = 0', "set local work_mem = '64MB'"] },
    '1 lane wm64': { lanes: 1, settings: ["set local work_mem = '64MB'"] },
  };
  for (let round = 0; round < 2; round++)
    for (const [name, variant] of Object.entries(variants)) {
      const queue = Array.from({ length: 10 }, (_, i) => `site-${i}`);
      const started = Date.now();
      let n = 0;
      const lane = async () => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        for (let site = queue.shift(); site; site = queue.shift()) {
          await client.query('begin isolation level repeatable read');
          for (const s of variant.settings) await client.query(s);
          const parts = await copyCsvParts({
            client,
            select: `select t.* from ${t} t where t.site_id = '${site}' and t.created_at < '2025-02-01' order by t.id`,
            rowsPerPart: 1000000,
            nextFile: () => path.join(dir, `${site}-${n++}.csv`),
            recordIds: true,
          });
          for (const part of parts) {
            const lit = await takeIdsLiteral(part);
            await client.query('create temp table if not exists ids_t (ids bigint[]) on commit drop');
            await client.query('insert into ids_t values ($1::bigint[])', [lit]);
          }
          await client.query('commit');
        }
        await client.end();
      };
      await Promise.all(Array.from({ length: variant.lanes }, lane));
      console.log(`${name.padEnd(32)} ${(Date.now() - started) / 1000} s`);
      for (const f of fs.readdirSync(dir)) fs.rmSync(path.join(dir, f));
    }
  await c.end();
  await platform.stop();
  process.exit(0);
}
void main();
