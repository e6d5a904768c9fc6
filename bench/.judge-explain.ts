import pg from 'pg';
import { startBenchPlatform } from './support';

async function main() {
  const platform = await startBenchPlatform({ ARCHIVE_CRON: '0 3 1 1 *' });
  const c = new pg.Client({ connectionString: platform.config.databaseUrl });
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
  const sites = `array['site-0','site-1','site-2','site-3','site-4','site-5','site-6','site-7','site-8','site-9']`;
  const variants: Record<string, string> = {
    current: `select site_id, (count(*) - count(*) filter (where stray))::int as archived, (count(*) filter (where stray))::int as strays
         from (select t.site_id, (c.id is not null or not (t.site_id = any(${sites}))) as stray from ${t} t left join (select 1::bigint as id where false) c on c.id = t.id) judged
        group by site_id`,
    countOnly: `select site_id, count(*) from ${t} group by site_id`,
    countIdx: `set local enable_seqscan = off; select site_id, count(*) from ${t} group by site_id`,
    copyPlatform: `explain analyze select t.* from ${t} t where t.site_id = 'site-1' and t.created_at < '2025-02-01' order by t.id`,
  };
  for (const [name, sql] of Object.entries(variants)) {
    for (let i = 0; i < 2; i++) {
      await c.query('begin');
      const started = Date.now();
      const parts = sql.split('; ');
      for (const p of parts.slice(0, -1)) await c.query(p);
      const r = await c.query(`explain (analyze, buffers) ${parts.at(-1)!.replace(/^explain analyze /, '')}`);
      await c.query('commit');
      console.log(`--- ${name} run ${i}: ${Date.now() - started} ms`);
      if (i === 1) console.log(r.rows.map((row) => row['QUERY PLAN']).join('\n'));
    }
  }
  await c.end();
  await platform.stop();
  process.exit(0);
}
void main();
