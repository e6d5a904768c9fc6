/**
 * `npx tsx bench/fairness.ts [--recipients 20000] [--rows 1000000] [--singles 50] [--publishes 20] [--approvals-apart]`: what one
 * site's bulk work does to another site's small work on the shared workers, with fairness on the task
 * queues off and on, in one run (decision 046). Each side has a platform of its own, its Temporal dev
 * server started with `matching.enableFairness` as said, and one worker process for the archival, messaging
 * and approvals queues, as compose runs it. On each:
 * - A alone: site A starts a role send to `--recipients` users and an archive run of `--rows` email log rows;
 * - B alone: site B sends `--singles` single emails, one every 200 ms, and meanwhile publishes `--publishes`
 *   pages through one approval stage, one after another;
 * - together: A's work, and B's once A's send is under way.
 * It prints B's p50 and p99 from request to delivery (the log's SUCCESS, written once the relay accepted)
 * and to PUBLISHED, and A's total time, alone and together. After each publish, B runs the Temporal floor
 * beneath it (bench/temporal-floor: a validated Update, two local activities) on a worker process of its
 * own: what A's work does to it is what the machine and the server do to any run, none of the platform's code. With fairness on, last, the worker is killed
 * in the middle of A's work and started again: it prints what was lost and what was sent twice.
 */
import fs from 'node:fs';
import os from 'node:os';
import { ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import { signToken } from '../api/http/sign-token';
import { componentType } from '../data/content/component-types';
import { createComponent } from '../data/content/components';
import { fairShareOf } from '../domain/fairness';
import { stopChild } from '../scripts/platform/children';
import { BenchPlatform, peakMemoryMb, processCpuTicks, quantile, startBenchPlatform } from './support';
import { approvalFloorRun, Floor, startFloor } from './temporal-floor/runs';

const PAGE = componentType('PAGE')!;
const SITE_A = 'site-a';
const SITE_B = 'site-b';
/** The one worker process's queues, as compose runs them; `--approvals-apart` gives approvals a process of its own. */
let mainQueues = ['archival', 'messaging', 'approvals'];

interface Sizes {
  recipients: number;
  rows: number;
  singles: number;
  publishes: number;
}

interface Phase {
  aMs: number | null;
  emailMs: number[];
  publishMs: number[];
  /** The Temporal floor beneath each publish, run after it. */
  floorMs: number[];
  /** The whole machine's busy CPU time during the phase, and the phase's wall time. */
  cpuSeconds: number;
  /** The worker process's own CPU time: one Node event loop runs the three queues, as in compose. */
  workerCpuSeconds: number;
  wallMs: number;
}

type Api = (method: string, path: string, token: string, body?: unknown) => Promise<{ status: number; body: Record<string, unknown> }>;

interface Side {
  platform: BenchPlatform;
  api: Api;
  tokens: { admin: string; editorA: string; editorB: string; managerB: string };
  templates: { bulk: string; single: string };
  worker: ChildProcess;
  floor: Floor;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      recipients: { type: 'string', default: '20000' },
      rows: { type: 'string', default: '1000000' },
      singles: { type: 'string', default: '50' },
      publishes: { type: 'string', default: '20' },
      'approvals-apart': { type: 'boolean', default: false },
    },
  });
  if (values['approvals-apart']) mainQueues = ['archival', 'messaging'];
  const sizes: Sizes = {
    recipients: Number(values.recipients),
    rows: Number(values.rows),
    singles: Number(values.singles),
    publishes: Number(values.publishes),
  };
  console.log(
    `bench/fairness: site A sends to ${sizes.recipients} and archives ${sizes.rows} rows; site B sends ${sizes.singles} single emails (one every 200 ms) and publishes ${sizes.publishes} pages through approval (${os.cpus().length} cores); worker processes: ${mainQueues.join(', ')}${values['approvals-apart'] ? '; approvals' : ''}`,
  );
  const lines: string[] = [];
  for (const fairness of [false, true]) {
    const side = await startSide(fairness, sizes.recipients);
    const label = `fairness ${fairness ? 'on' : 'off'}`;
    console.log(`${label}:`);
    const aAlone = await phase(side, sizes, { a: true, b: false }, 'alone');
    const bAlone = await phase(side, sizes, { a: false, b: true }, 'b-alone');
    const together = await phase(side, sizes, { a: true, b: true }, 'together');
    const idleSeconds = await idleCpuSeconds(bAlone.wallMs);
    lines.push(...report(label, aAlone, { ...bAlone, cpuSeconds: bAlone.cpuSeconds - idleSeconds }, together));
    lines.push(`  ${label}: the platform idle for as long as B alone took ${idleSeconds.toFixed(1)} CPU-s, not counted as B's`);
    lines.push(`  ${label}: worker peak ${peakMemoryMb(side.worker.pid!).toFixed(0)} MiB`);
    if (fairness) lines.push(await killDuringA(side, sizes));
    await stopChild(side.floor.worker);
    await side.platform.stop();
  }
  for (const line of lines) console.log(line);
  process.exit(0);
}

/** A platform with fairness on or off, its worker, site A's recipients, both sites' templates and B's approval policy. */
async function startSide(fairness: boolean, recipients: number): Promise<Side> {
  // B's editor sends more than the default ten emails a minute: the limit per sender is raised.
  const platform = await startBenchPlatform({ ARCHIVE_CRON: '0 3 1 1 *', SEND_RATE_LIMIT: '1000' }, { fairness });
  const { config, db, apiUrl, info } = platform;
  const sign = (claims: Parameters<typeof signToken>[0]['claims']) => signToken({ secret: config.identity.jwtSecret, claims });
  const tokens = {
    admin: await sign({ sub: 'bench-admin', roles: ['ADMIN'] }),
    editorA: await sign({ sub: 'editor-a', roles: ['EDITOR'], sites: [SITE_A] }),
    editorB: await sign({ sub: 'editor-b', roles: ['EDITOR'], sites: [SITE_B] }),
    managerB: await sign({ sub: 'manager-b', roles: ['MANAGER'], sites: [SITE_B] }),
  };
  const api: Api = async (method, path, token, body) => {
    const answer = await fetch(`${apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: answer.status, body: answer.status === 204 ? {} : ((await answer.json()) as Record<string, unknown>) };
  };
  for (let i = 0; i < recipients; i += 1000) {
    const batch = Array.from({ length: Math.min(1000, recipients - i) }, (_, j) => ({
      email: `a${i + j}@a.example`,
      name: `A ${i + j}`,
      locale: 'en',
      roles: ['VIEWER'],
      site_ids: [SITE_A],
    }));
    await db('directory.user').insert(batch);
  }
  const worker = await platform.startWorker(mainQueues);
  if (!mainQueues.includes('approvals')) await platform.startWorker(['approvals']);
  const channel = await api('POST', '/api/settings/email', tokens.admin, {
    configName: 'capture',
    transport: 'SMTP',
    smtpHost: '127.0.0.1',
    smtpPort: info.mail.smtpPort,
  });
  await api('PUT', '/api/settings/email/order', tokens.admin, { ids: [channel.body.id] });
  await api('POST', '/api/workflow/approvals/policies', tokens.admin, { componentType: 'PAGE', siteId: SITE_B, enabled: true });
  await api('POST', '/api/settings/archive-policies', tokens.admin, { logType: 'EMAIL_LOG', siteId: SITE_A, retentionDays: 30, enabled: true });
  const templates = { bulk: await template(api, tokens.editorA, SITE_A), single: await template(api, tokens.editorB, SITE_B) };
  const floor = await startFloor(platform);
  return { platform, api, tokens, templates, worker, floor };
}

async function template(api: Api, editor: string, siteId: string): Promise<string> {
  const created = await api('POST', '/api/email/templates', editor, {
    siteId,
    name: `news of ${siteId}`,
    roleKey: null,
    subjectEn: '{{phase}}: news of {{site}}',
    bodyEn: '<p>Hello {{user.name}}, here is the news.</p>',
    subjectAr: '{{phase}}: أخبار {{site}}',
    bodyAr: '<p>مرحبا {{user.name}}</p>',
  });
  if (created.status !== 201) throw new Error(`template: ${created.status} ${JSON.stringify(created.body)}`);
  await api('POST', `/api/email/templates/${created.body.id}/publish`, editor, {});
  return created.body.id as string;
}

/** One phase: A's work, B's, or both (B's once A's send is delivering); what each took. */
async function phase(side: Side, sizes: Sizes, runs: { a: boolean; b: boolean }, name: string): Promise<Phase> {
  await fetch(`${side.platform.info.mail.apiUrl}/messages`, { method: 'DELETE' });
  if (runs.a) await seedSiteA(side.platform, sizes.rows);
  const busyBefore = busyCpuSeconds();
  const workerBefore = processCpuSeconds(side.worker.pid!);
  const aStarted = performance.now();
  const a = runs.a ? startA(side, name) : null;
  if (a && runs.b) await deliveredOf(side.platform, (await a.batchId)!, 100);
  const b = runs.b ? runB(side, sizes, name) : { emailMs: [], publishMs: [], floorMs: [] };
  const bDone = await b;
  const aMs = a ? (await a.done, performance.now() - aStarted) : null;
  const wallMs = performance.now() - aStarted;
  const cpuSeconds = busyCpuSeconds() - busyBefore;
  const workerCpuSeconds = processCpuSeconds(side.worker.pid!) - workerBefore;
  console.log(
    `  ${name}: A ${aMs === null ? '-' : `${(aMs / 1000).toFixed(1)} s`}, B ${bDone.emailMs.length} emails, ${bDone.publishMs.length} publishes; ${cpuSeconds.toFixed(1)} CPU-s (the worker ${workerCpuSeconds.toFixed(1)}) in ${(wallMs / 1000).toFixed(1)} s`,
  );
  return { aMs, ...bDone, cpuSeconds, workerCpuSeconds, wallMs };
}

/** One process's CPU time so far (user and system), in seconds. */
const processCpuSeconds = (pid: number) => (processCpuTicks().get(pid)?.ticks ?? 0) / 100;

/** The machine's busy CPU time so far, every core and process (user, nice, system, irq, softirq, steal), from /proc/stat. */
function busyCpuSeconds(): number {
  const [, user, nice, system, , , irq, softirq, steal] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  return (user + nice + system + irq + softirq + steal) / 100;
}

/** Site A's role send and archive run, started together; `done` once both have ended. */
function startA(side: Side, phaseName: string): { batchId: Promise<string>; done: Promise<unknown> } {
  const { api, tokens, platform } = side;
  const send = api('POST', '/api/email/send/role', tokens.editorA, {
    templateId: side.templates.bulk,
    roleKey: 'VIEWER',
    siteId: SITE_A,
    variables: { phase: phaseName, site: SITE_A },
  });
  const archive = api('POST', '/api/settings/archive-policies/run', tokens.admin, { logType: 'EMAIL_LOG', siteId: SITE_A });
  const resultOf = (workflowId: string, runId?: string) => platform.temporal.client.workflow.getHandle(workflowId, runId).result();
  const sent = send.then((answer) => {
    if (answer.status !== 202) throw new Error(`role send: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  });
  const archived = archive.then((answer) => {
    if (answer.status !== 202) throw new Error(`archive run: ${answer.status} ${JSON.stringify(answer.body)}`);
    const [run] = answer.body.runs as Array<{ workflowId: string; runId: string }>;
    return resultOf(run.workflowId, run.runId);
  });
  return { batchId: sent.then((body) => body.batchId as string), done: Promise.all([sent.then((body) => resultOf(body.workflowId as string)), archived]) };
}

/** Site B's single emails, one every 200 ms, and its publishes through approval meanwhile, one after another. */
async function runB(side: Side, sizes: Sizes, phaseName: string): Promise<{ emailMs: number[]; publishMs: number[]; floorMs: number[] }> {
  const [emailMs, published] = await Promise.all([singles(side, sizes.singles, phaseName), publishes(side, sizes.publishes, phaseName)]);
  return { emailMs, ...published };
}

async function singles(side: Side, count: number, phaseName: string): Promise<number[]> {
  const sends: Array<Promise<number>> = [];
  for (let i = 0; i < count; i++) {
    const askedAt = Date.now();
    sends.push(
      side
        .api('POST', '/api/email/send', side.tokens.editorB, {
          templateId: side.templates.single,
          to: `b${i}@b.example`,
          siteId: SITE_B,
          variables: { phase: phaseName, site: SITE_B },
        })
        .then(async (answer) => {
          if (answer.status !== 202) throw new Error(`single send: ${answer.status} ${JSON.stringify(answer.body)}`);
          return (await successAt(side.platform, answer.body.logId as string)) - askedAt;
        }),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return Promise.all(sends);
}

/** When the log row became SUCCESS (its `updated_at`), polled until it has. */
async function successAt(platform: BenchPlatform, logId: string): Promise<number> {
  for (;;) {
    const row = (await platform.db('email.email_log').where({ id: logId }).first('status', 'updated_at')) as { status: string; updated_at: Date };
    if (row.status === 'SUCCESS') return row.updated_at.getTime();
    if (row.status === 'FAILED') throw new Error(`single send ${logId} failed`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function publishes(side: Side, count: number, phaseName: string): Promise<{ publishMs: number[]; floorMs: number[] }> {
  const { db } = side.platform;
  const took: number[] = [];
  const floorMs: number[] = [];
  for (let i = 0; i < count; i++) {
    const actor = { id: 'editor-b', name: null };
    const created = await createComponent(db, {
      type: PAGE,
      siteId: SITE_B,
      values: { name: `${phaseName}-${i}`, fields: { slug: `${phaseName}-${i}`, title: `Page ${i}`, data: { i } } },
      actor,
    });
    const id = created.row.id;
    const started = performance.now();
    const submitted = await side.api('POST', `/api/content/pages/${id}/publish`, side.tokens.editorB, {});
    if (submitted.status !== 202) throw new Error(`publish: ${submitted.status} ${JSON.stringify(submitted.body)}`);
    const decided = await side.api('POST', `/api/workflow/approvals/${submitted.body.correlationId}/decide`, side.tokens.managerB, { decision: 'APPROVED' });
    if (decided.status !== 200) throw new Error(`decide: ${decided.status} ${JSON.stringify(decided.body)}`);
    while (((await db(PAGE.table).where({ id }).first('status')) as { status: string }).status !== 'PUBLISHED') await new Promise((r) => setTimeout(r, 10));
    took.push(performance.now() - started);
    floorMs.push(await floorRun(side, `${phaseName}-${i}`));
  }
  return { publishMs: took, floorMs };
}

/** One run of the floor beneath a publish through approval, with B's share: ms from its start to its end. */
async function floorRun(side: Side, id: string): Promise<number> {
  const started = performance.now();
  await approvalFloorRun(side.floor.client, id, fairShareOf('publish', SITE_B));
  return performance.now() - started;
}

/** Site A's email log rows, older than its 30-day policy: the archive run's work. */
async function seedSiteA(platform: BenchPlatform, rows: number): Promise<void> {
  const { db } = platform;
  const start = "timestamptz '2025-01-01 00:00:00+00'";
  await db.raw(`select settings.ensure_log_partitions('email.email_log', date '2025-01-01', (${start} + ? * interval '1 second')::date)`, [rows]);
  await db.raw(
    `insert into email.email_log (site_id, created_at, updated_at, recipient, locale, subject, status, attempts, missing_variables, variables)
     select ?, ${start} + g * interval '1 second', ${start} + g * interval '1 second', 'old' || g || '@a.example', 'en',
            'Old news #' || g, 'SUCCESS', 1, '[]'::jsonb, jsonb_build_object('n', g)
     from generate_series(1, ?) g`,
    [SITE_A, rows],
  );
  await db.raw('analyze email.email_log');
}

/** How many of a batch's rows are SUCCESS, once at least `atLeast` are (polled). */
async function deliveredOf(platform: BenchPlatform, batchId: string, atLeast: number): Promise<number> {
  for (;;) {
    const { n } = (await platform.db('email.email_log').where({ batch_id: batchId, status: 'SUCCESS' }).count({ n: '*' }).first()) as { n: string };
    if (Number(n) >= atLeast) return Number(n);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

function report(label: string, aAlone: Phase, bAlone: Phase, together: Phase): string[] {
  const spread = (values: number[]) => `p50 ${seconds(quantile(values, 0.5))}, p99 ${seconds(quantile(values, 0.99))}`;
  const publishRatio = quantile(together.publishMs, 0.99) / quantile(bAlone.publishMs, 0.99);
  const floorRatio = quantile(together.floorMs, 0.99) / quantile(bAlone.floorMs, 0.99);
  return [
    `  ${label}: B's single emails, request to SUCCESS: idle ${spread(bAlone.emailMs)}; beside A ${spread(together.emailMs)} (goal p99 <= 2 s)`,
    `  ${label}: B's publishes, request to PUBLISHED: idle ${spread(bAlone.publishMs)}; beside A ${spread(together.publishMs)}; p99 beside A / idle ${publishRatio.toFixed(2)} (goal <= 2)`,
    `  ${label}: the Temporal floor beneath them (a worker of its own): idle ${spread(bAlone.floorMs)}; beside A ${spread(together.floorMs)}; p99 beside A / idle ${floorRatio.toFixed(2)}`,
    `  ${label}: A's send and archive: alone ${seconds(aAlone.aMs!)}, beside B ${seconds(together.aMs!)}; ratio ${(together.aMs! / aAlone.aMs!).toFixed(2)} (goal <= 1.1)`,
    `  ${label}: ${floorOfA(aAlone, bAlone)}`,
  ];
}

/**
 * How fast A can be beside B on this machine: B's work takes the CPU it took alone (less what the idle
 * platform takes), so A and B together need at least their CPU times over the cores, and over one core for
 * the worker's share; and, at the rate of busy cores A alone kept up, their CPU times at that rate.
 */
function floorOfA(aAlone: Phase, bAlone: Phase): string {
  const cores = os.cpus().length;
  const busyRate = aAlone.cpuSeconds / (aAlone.wallMs / 1000);
  const machineMs = ((aAlone.cpuSeconds + bAlone.cpuSeconds) / cores) * 1000;
  // The worker is one event loop: it cannot run more than one core's worth, whatever the machine has free.
  const workerMs = (aAlone.workerCpuSeconds + bAlone.workerCpuSeconds) * 1000;
  const floorMs = Math.max(aAlone.aMs!, machineMs, workerMs);
  const atRateMs = ((aAlone.cpuSeconds + bAlone.cpuSeconds) / busyRate) * 1000;
  return (
    `floor: A alone kept ${busyRate.toFixed(2)} of ${cores} cores busy, its worker ${(aAlone.workerCpuSeconds / (aAlone.wallMs / 1000)).toFixed(2)} of one; ` +
    `B's own work took ${bAlone.cpuSeconds.toFixed(1)} CPU-s (the worker ${bAlone.workerCpuSeconds.toFixed(1)}): A beside B takes at least ${seconds(floorMs)} ` +
    `(the machine ${seconds(machineMs)}, the worker's one core ${seconds(workerMs)}), ${(floorMs / aAlone.aMs!).toFixed(2)} of A alone; ` +
    `at the ${busyRate.toFixed(2)} cores A alone kept busy, ${seconds(atRateMs)}, ${(atRateMs / aAlone.aMs!).toFixed(2)} of A alone`
  );
}

/** The machine's busy CPU time while the platform sits idle for `ms`: what B's phase took that was not B's. */
async function idleCpuSeconds(ms: number): Promise<number> {
  const before = busyCpuSeconds();
  await new Promise((resolve) => setTimeout(resolve, ms));
  return busyCpuSeconds() - before;
}

/** A's work again, the worker killed (SIGKILL) once part of the send is out, then started again: what was lost or sent twice. */
async function killDuringA(side: Side, sizes: Sizes): Promise<string> {
  const { platform } = side;
  await fetch(`${platform.info.mail.apiUrl}/messages`, { method: 'DELETE' });
  await seedSiteA(platform, sizes.rows);
  const a = startA(side, 'kill');
  const batchId = await a.batchId;
  const before = await deliveredOf(platform, batchId, Math.floor(sizes.recipients / 4));
  side.worker.kill('SIGKILL');
  side.worker = await platform.startWorker(mainQueues);
  await a.done;
  const rows = (await platform.db('email.email_log').where({ batch_id: batchId }).select('status').count({ n: '*' }).groupBy('status')) as Array<{
    status: string;
    n: string;
  }>;
  const delivered = Number(rows.find((row) => row.status === 'SUCCESS')?.n ?? 0);
  const search = await fetch(`${platform.info.mail.apiUrl}/search?query=${encodeURIComponent('subject:"kill: news of site-a"')}&limit=1`);
  const mails = ((await search.json()) as { messages_count: number }).messages_count;
  const left = Number(
    ((await platform.db('email.email_log').where({ site_id: SITE_A }).where('created_at', '<', '2026-01-01').count({ n: '*' }).first()) as { n: string }).n,
  );
  return `  worker killed at ${before} of ${sizes.recipients} delivered: rows ${rows.map((row) => `${row.status} ${row.n}`).join(', ')}; lost ${sizes.recipients - delivered}; the relay took ${mails} messages (${mails - sizes.recipients} twice); A's archived rows left ${left}`;
}

void main();
