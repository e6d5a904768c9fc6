/**
 * `npx tsx bench/email.ts [--users 10000] [--channels 2] [--rate R [--burst B]]`: sends one template by role
 * to that many directory users through the platform (API, the messaging worker as its own process, the mail
 * capture server) and prints messages per second and the worker's peak memory, beside a baseline measured in
 * the same run: raw nodemailer, pooled the same way, sending the same rendered messages to the same server.
 * The platform has `--channels` active configurations, in order (the second a standby the first never
 * fails over to here: it costs what being ready to fail over costs). With `--rate`, the first is limited to
 * R messages a second (burst B): the run's time is then printed beside the time that limit sets.
 */
// First: with --tracing, the SDK patches `pg` and `http` as they load.
import { tracingLine } from './tracing';
import os from 'node:os';
import { parseArgs } from 'node:util';
import nodemailer from 'nodemailer';
import { signToken } from '../api/http/sign-token';
import { renderTemplate } from '../domain/render-template';
import { cpuBetween, peakMemoryMb, processCpuTicks, startBenchPlatform } from './support';

const SITE = 'bench-site';
const TEMPLATE = {
  subject_en: 'Your report, {{user.name}}',
  body_en: '<p>Hello {{user.name}}, the report for {{month}} is ready.</p>',
  subject_ar: 'تقريرك يا {{user.name}}',
  body_ar: '<p>مرحبا {{user.name}}، تقرير {{month}} جاهز.</p>',
};

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      tracing: { type: 'boolean', default: false },
      users: { type: 'string', default: '10000' },
      channels: { type: 'string', default: '2' },
      rate: { type: 'string' },
      burst: { type: 'string' },
      statements: { type: 'boolean', default: false },
      cpu: { type: 'boolean', default: false },
    },
  });
  const users = Number(values.users);
  const channels = Number(values.channels);
  const rate = values.rate === undefined ? null : Number(values.rate);
  const burst = values.burst === undefined ? null : Number(values.burst);
  console.log(
    `bench/email: one template by role to ${users} directory users, ${channels} active channel(s)${rate === null ? '' : `, the first limited to ${rate}/s (burst ${burst ?? 'one second of it'})`} (${os.cpus().length} cores)`,
  );
  console.log(tracingLine());
  const platform = await startBenchPlatform();
  const { db, apiUrl, config, info, temporal } = platform;
  const recipients = Array.from({ length: users }, (_, i) => ({ email: `user${i}@bench.example`, name: `User ${i}`, locale: i % 4 === 0 ? 'ar' : 'en' }));
  for (let i = 0; i < recipients.length; i += 1000) {
    await db('directory.user').insert(recipients.slice(i, i + 1000).map((user) => ({ ...user, roles: ['VIEWER'], site_ids: [SITE] })));
  }
  const variables = { month: 'November' };

  // Baseline: the same messages through one pooled nodemailer transport.
  const transport = nodemailer.createTransport({ pool: true, maxConnections: 5, host: '127.0.0.1', port: info.mail.smtpPort, ignoreTLS: true });
  const baselineCpuBefore = processCpuTicks();
  const baselineStarted = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next < recipients.length) {
        const user = recipients[next++];
        const rendered = renderTemplate(TEMPLATE, { ...variables, user: { name: user.name } }, user.locale as 'en' | 'ar');
        await transport.sendMail({ from: config.mail.from, to: user.email, subject: rendered.subject, html: rendered.html });
      }
    }),
  );
  const baselineMs = performance.now() - baselineStarted;
  const baselineCpuAfter = processCpuTicks();
  transport.close();
  const baselinePeakMb = process.resourceUsage().maxRSS / 1024;
  // The platform meets the capture as the baseline did, empty: Mailpit keeps its mail in SQLite, so both
  // phases write into the same kind of store.
  const emptied = await fetch(`${info.mail.apiUrl}/messages`, { method: 'DELETE' });
  if (!emptied.ok) throw new Error(`the mail capture did not empty (${emptied.status})`);

  // Platform.
  const worker = await platform.startWorker(
    ['messaging', 'approvals'],
    process.env.BENCH_WORKER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_WORKER_NODE_OPTIONS } : {},
  );
  const admin = await signToken({ secret: config.identity.jwtSecret, claims: { sub: 'bench-admin', roles: ['ADMIN'] } });
  const post = async (path: string, body: unknown) => {
    const answer = await fetch(`${apiUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return (await answer.json()) as Record<string, unknown>;
  };
  const ids: string[] = [];
  for (let i = 0; i < channels; i++) {
    const limit = i === 0 && rate !== null ? { ratePerSecond: rate, burst } : {};
    ids.push(
      (await post('/api/settings/email', { configName: `capture-${i + 1}`, transport: 'SMTP', smtpHost: '127.0.0.1', smtpPort: info.mail.smtpPort, ...limit }))
        .id as string,
    );
  }
  await fetch(`${apiUrl}/api/settings/email/order`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ids }),
  });
  const template = await post('/api/email/templates', {
    siteId: SITE,
    name: 'report',
    roleKey: null,
    subjectEn: TEMPLATE.subject_en,
    bodyEn: TEMPLATE.body_en,
    subjectAr: TEMPLATE.subject_ar,
    bodyAr: TEMPLATE.body_ar,
  });
  await post(`/api/email/templates/${template.id}/publish`, {});

  if (values.statements) await db.raw('create extension if not exists pg_stat_statements').then(() => db.raw('select pg_stat_statements_reset()'));
  const cpuBefore = processCpuTicks();
  const started = performance.now();
  const sent = await post('/api/email/send/role', { templateId: template.id, roleKey: 'VIEWER', siteId: SITE, variables });
  await temporal.client.workflow.getHandle(sent.workflowId as string).result();
  const platformMs = performance.now() - started;
  const cpuAfter = processCpuTicks();
  const workerPeakMb = peakMemoryMb(worker.pid!);
  const logged = (await db('email.email_log')
    .where({ batch_id: sent.batchId as string })
    .select('status')
    .count({ n: '*' })
    .groupBy('status')) as Array<{ status: string; n: string }>;

  const line = (name: string, ms: number, mb: number) =>
    `  ${name.padEnd(34)} ${users} messages  ${(ms / 1000).toFixed(2).padStart(7)} s  ${(users / (ms / 1000)).toFixed(1).padStart(8)} messages/s  peak ${mb.toFixed(0)} MiB`;
  console.log(line('baseline: pooled nodemailer', baselineMs, baselinePeakMb) + ' (this process)');
  console.log(line('platform: POST /api/email/send/role', platformMs, workerPeakMb) + ' (worker process)');
  // How many of the log rows' updates PostgreSQL wrote in place, touching no index (HOT).
  const updates = (await db.raw(
    // The log is partitioned by month: its rows' updates are counted on its months.
    `select coalesce(sum(n_tup_upd), 0)::int as updated, coalesce(sum(n_tup_hot_upd), 0)::int as hot from pg_stat_user_tables
      where relid in (select inhrelid from pg_inherits where inhparent = 'email.email_log'::regclass)`,
  )) as { rows: Array<{ updated: number; hot: number }> };
  const { updated, hot } = updates.rows[0];
  const logs = `${logged.map((row) => `${row.status} ${row.n}`).join(', ')}; row updates ${updated}, in place (HOT) ${((100 * hot) / Math.max(1, updated)).toFixed(0)}%`;
  if (rate !== null) {
    // The limit's own time: the burst goes at once, each further message 1/rate after the one before.
    const limitMs = ((users - (burst ?? Math.ceil(rate))) / rate) * 1000;
    console.log(`  the limit alone: ${(limitMs / 1000).toFixed(2)} s for ${users} messages at ${rate}/s; logs: ${logs}`);
    console.log(`  platform / the limit's time: ${(platformMs / limitMs).toFixed(3)} (goal 0.95 to 1.05)`);
  } else {
    console.log(`  platform / baseline rate: ${(baselineMs / platformMs).toFixed(2)}; logs: ${logs}`);
  }
  if (values.cpu) {
    console.log(`  CPU by process (the baseline's phase, ${(baselineMs / 1000).toFixed(1)} s):`);
    for (const line of cpuBetween(baselineCpuBefore, baselineCpuAfter, 4)) console.log(`    ${line}`);
    console.log(`  CPU by process (the platform phase, ${(platformMs / 1000).toFixed(1)} s on ${os.cpus().length} cores):`);
    for (const line of cpuBetween(cpuBefore, cpuAfter)) console.log(`    ${line}`);
  }
  if (values.statements) {
    // Where the database's time went during the platform's send: the statements that took most of it.
    const top = (await db.raw(
      `select calls, round(total_exec_time)::int as total_ms, round(mean_exec_time::numeric, 3) as mean_ms, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) as query
         from pg_stat_statements order by total_exec_time desc limit 10`,
    )) as { rows: Array<{ calls: number; total_ms: number; mean_ms: string; query: string }> };
    console.log('  statements by database time (the platform phase):');
    for (const row of top.rows)
      console.log(`    ${String(row.total_ms).padStart(7)} ms ${String(row.calls).padStart(7)} calls ${row.mean_ms.padStart(8)} ms  ${row.query}`);
  }
  await platform.stop();
  process.exit(0);
}

void main();
