/**
 * `npx tsx bench/publish.ts [--count 200] [--concurrency 4] [--temporal dev|cluster|both]`: drives N
 * publishes of pages through the API with no policy, and N with a site policy plus the manager's decide
 * (until the page is PUBLISHED), and prints publishes per second and p50/p95 latency of each beside two
 * baselines measured in the same run:
 * - the same database writes done directly through the data functions, without HTTP or a workflow;
 * - the Temporal floor on the same server (bench/temporal-floor): a workflow that runs one local activity,
 *   and one that takes one validated Update and then runs two local activities, each started and awaited
 *   by a plain client, its worker a process of its own as the platform's is.
 * The platform's throughput as a share of each floor's is printed last. `--temporal both` measures on the
 * dev server, then on a cluster of two nodes behind its door (tokens required), one after the other.
 *
 * `--release 200` measures a release instead: one `POST /api/content/releases/{id}/publish` of 200 pages (all
 * in one transaction), beside the same 200 pages published one by one through the API and the release's
 * transaction alone (the data function, no HTTP, no workflow), in the same run.
 */
// First: with --tracing, the SDK patches `pg` and `http` as they load.
import { tracingLine } from './tracing';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { signToken } from '../api/http/sign-token';
import { confirmDecision, proposeDecision, submitApproval } from '../data/approvals/approvals';
import { componentType } from '../data/content/component-types';
import { createComponent, publishComponentRevision } from '../data/content/components';
import { latestRevision } from '../data/content/revisions';
import { publishRelease } from '../data/content/releases';
import { publishWorkflowId } from '../workflows/approvals/definitions';
import { BenchPlatform, BenchTemporal, benchTemporals, peakMemoryMb, startBenchPlatform } from './support';
import { oneLocalActivity } from './temporal-floor/workflows';
import { approvalFloorRun, FLOOR_QUEUE, startFloor } from './temporal-floor/runs';

const PAGE = componentType('PAGE')!;

interface Measured {
  name: string;
  latenciesMs: number[];
  wallMs: number;
}

/** Runs `one` for 0..count-1 with at most `concurrency` at a time; keeps each call's latency. */
async function measure(name: string, count: number, concurrency: number, one: (i: number) => Promise<void>): Promise<Measured> {
  const latenciesMs: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const t = performance.now();
        await one(i);
        latenciesMs.push(performance.now() - t);
      }
    }),
  );
  return { name, latenciesMs, wallMs: performance.now() - started };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

function report(result: Measured): string {
  const sorted = [...result.latenciesMs].sort((a, b) => a - b);
  const perSecond = result.latenciesMs.length / (result.wallMs / 1000);
  return `  ${result.name.padEnd(44)} ${perSecond.toFixed(1).padStart(8)} publishes/s   p50 ${percentile(sorted, 50).toFixed(1).padStart(7)} ms   p95 ${percentile(sorted, 95).toFixed(1).padStart(7)} ms`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      tracing: { type: 'boolean', default: false },
      count: { type: 'string', default: '200' },
      concurrency: { type: 'string', default: '4' },
      temporal: { type: 'string', default: 'dev' },
      release: { type: 'string' },
    },
  });
  if (values.release !== undefined) {
    await runRelease(Number(values.release), Number(values.concurrency));
    process.exit(0);
  }
  const count = Number(values.count);
  const concurrency = Number(values.concurrency);
  const temporals = benchTemporals(values.temporal);
  console.log(`bench/publish: ${count} publishes per scenario, ${concurrency} at a time (${os.cpus().length} cores), Temporal: ${temporals.join(', then ')}`);
  console.log(tracingLine());
  const runs: Array<{ temporal: BenchTemporal; platformOpen: Measured; platformGuarded: Measured }> = [];
  for (const temporal of temporals) {
    console.log(`Temporal ${temporal === 'dev' ? 'dev server' : 'cluster (two nodes behind the door, tokens required)'}:`);
    runs.push({ temporal, ...(await runOn(temporal, count, concurrency)) });
  }
  if (runs.length > 1) {
    console.log('  side by side (platform scenarios):');
    for (const run of runs)
      for (const result of [run.platformOpen, run.platformGuarded])
        console.log(report({ ...result, name: `${run.temporal}: ${result.name.replace(/^platform: /, '')}` }));
  }
  process.exit(0);
}

async function runOn(temporal: BenchTemporal, count: number, concurrency: number): Promise<{ platformOpen: Measured; platformGuarded: Measured }> {
  const platform = await startBenchPlatform({}, { temporal });
  const { db, apiUrl, config } = platform;
  const worker = await platform.startWorker(['approvals']);
  const editor = await signToken({
    secret: config.identity.jwtSecret,
    claims: { sub: 'bench-editor', roles: ['EDITOR'], sites: ['open', 'guarded', 'base-open', 'base-guarded'] },
  });
  const manager = await signToken({ secret: config.identity.jwtSecret, claims: { sub: 'bench-manager', roles: ['MANAGER'], sites: ['guarded'] } });
  const admin = await signToken({ secret: config.identity.jwtSecret, claims: { sub: 'bench-admin', roles: ['ADMIN'] } });
  const post = async (path: string, token: string, body: unknown = {}) => {
    const answer = await fetch(`${apiUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const parsed = (await answer.json()) as Record<string, unknown>;
    return { status: answer.status, body: parsed };
  };
  const pages = async (siteId: string) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const created = await createComponent(db, {
        type: PAGE,
        siteId,
        values: { name: `p${i}`, fields: { slug: `p${i}`, title: `Page ${i}`, data: { i } } },
        actor: { id: 'bench-editor', name: null },
      });
      ids.push(created.row.id);
    }
    return ids;
  };
  const policy = await post('/api/workflow/approvals/policies', admin, { componentType: 'PAGE', siteId: 'guarded', enabled: true });
  if (policy.status !== 201) throw new Error(`policy: ${JSON.stringify(policy.body)}`);
  await post('/api/workflow/approvals/policies', admin, { componentType: 'PAGE', siteId: 'base-guarded', enabled: true });

  const baseOpen = await pages('base-open');
  const baselineOpen = await measure('baseline: publish writes, no policy', count, concurrency, async (i) => {
    const rev = (await latestRevision(db, PAGE, baseOpen[i])) as number;
    await publishComponentRevision(db, { type: PAGE, id: baseOpen[i], rev, actor: { id: 'bench-editor', name: null } });
  });

  const open = await pages('open');
  const platformOpen = await measure('platform: POST publish, no policy', count, concurrency, async (i) => {
    const answer = await post(`/api/content/pages/${open[i]}/publish`, editor);
    if (answer.status !== 200) throw new Error(`publish: ${answer.status} ${JSON.stringify(answer.body)}`);
  });

  const baseGuarded = await pages('base-guarded');
  const baselineGuarded = await measure('baseline: submit + decide (propose, confirm) + publish writes', count, concurrency, async (i) => {
    const id = baseGuarded[i];
    const revision = (await latestRevision(db, PAGE, id)) as number;
    const correlationId = crypto.randomUUID();
    await submitApproval(db, {
      componentType: 'PAGE',
      siteId: 'base-guarded',
      resourceId: id,
      revision,
      callbackPath: `${PAGE.collection}/${id}/approval-callback`,
      requestedBy: 'bench-editor',
      title: null,
      comment: null,
      correlationId,
      workflowId: publishWorkflowId('PAGE', id),
    });
    const proposed = await proposeDecision(db, {
      correlationId,
      decider: { id: 'bench-manager', name: null, roles: ['MANAGER'], sites: ['base-guarded'] },
      decision: 'APPROVED',
      comment: null,
    });
    await confirmDecision(db, { correlationId, stage: proposed.stage, proposalId: proposed.proposalId });
    await publishComponentRevision(db, { type: PAGE, id, rev: revision, actor: { id: 'bench-manager', name: null } });
  });

  const guarded = await pages('guarded');
  const platformGuarded = await measure('platform: publish + decide, until PUBLISHED', count, concurrency, async (i) => {
    const id = guarded[i];
    const submitted = await post(`/api/content/pages/${id}/publish`, editor);
    if (submitted.status !== 202) throw new Error(`publish: ${submitted.status} ${JSON.stringify(submitted.body)}`);
    const decided = await post(`/api/workflow/approvals/${submitted.body.correlationId}/decide`, manager, { decision: 'APPROVED' });
    if (decided.status !== 200) throw new Error(`decide: ${decided.status} ${JSON.stringify(decided.body)}`);
    while (((await db(PAGE.table).where({ id }).first('status')) as { status: string }).status !== 'PUBLISHED')
      await new Promise((resolve) => setTimeout(resolve, 5));
  });

  const floor = await temporalFloor(platform, count, concurrency);

  console.log(report(baselineOpen));
  console.log(report(floor.open));
  console.log(report(platformOpen));
  console.log(report(baselineGuarded));
  console.log(report(floor.guarded));
  console.log(report(platformGuarded));
  const nodes = Object.entries(platform.clusterPeaksMb())
    .map(([name, mb]) => `, ${name} ${mb.toFixed(0)} MiB`)
    .join('');
  console.log(
    `  peak memory: approvals worker ${peakMemoryMb(worker.pid!).toFixed(0)} MiB, floor worker ${floor.peakMb.toFixed(0)} MiB, this process (API and baseline) ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB${nodes}`,
  );
  const share = (platform: Measured, base: Measured) => (platform.latenciesMs.length / platform.wallMs / (base.latenciesMs.length / base.wallMs)).toFixed(2);
  console.log(
    `  baseline / platform throughput: ${share(baselineOpen, platformOpen)}x without policy, ${share(baselineGuarded, platformGuarded)}x with approval`,
  );
  console.log(
    `  platform / Temporal floor throughput: ${share(platformOpen, floor.open)} without policy (goal >= 0.8, #60), ${share(platformGuarded, floor.guarded)} with approval (goal >= 0.5, #60)`,
  );
  await platform.stop();
  return { platformOpen, platformGuarded };
}

/** A release of `size` pages published in one call, beside the same pages one by one and the transaction alone. */
async function runRelease(size: number, concurrency: number): Promise<void> {
  console.log(
    `bench/publish --release ${size}: one release of ${size} pages, against ${size} single publishes (${concurrency} at a time), ${os.cpus().length} cores`,
  );
  const platform = await startBenchPlatform({}, { temporal: 'dev' });
  const { db, apiUrl, config } = platform;
  const worker = await platform.startWorker(['approvals']);
  const editor = await signToken({
    secret: config.identity.jwtSecret,
    claims: { sub: 'bench-editor', roles: ['EDITOR'], sites: ['single', 'release', 'direct'] },
  });
  const call = async (method: string, path: string, body: unknown = {}) => {
    const answer = await fetch(`${apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${editor}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
  };
  const pages = async (siteId: string) => {
    const ids: string[] = [];
    for (let i = 0; i < size; i++) {
      const values = { name: `p${i}`, fields: { slug: `p${i}`, title: `Page ${i}`, data: { i } } };
      ids.push((await createComponent(db, { type: PAGE, siteId, values, actor: { id: 'bench-editor', name: null } })).row.id);
    }
    return ids;
  };
  const releaseOf = async (siteId: string, ids: string[]) => {
    const created = await call('POST', '/api/content/releases', { name: `bench ${siteId}`, siteId });
    const id = created.body.id as string;
    for (const page of ids) {
      const added = await call('POST', `/api/content/releases/${id}/items`, { type: 'PAGE', id: page });
      if (added.status !== 201) throw new Error(`add: ${added.status} ${JSON.stringify(added.body)}`);
    }
    return id;
  };

  const single = await pages('single');
  const singles = await measure(`platform: ${size} single publishes`, size, concurrency, async (i) => {
    const answer = await call('POST', `/api/content/pages/${single[i]}/publish`);
    if (answer.status !== 200) throw new Error(`publish: ${answer.status} ${JSON.stringify(answer.body)}`);
  });

  const direct = await releaseOf('direct', await pages('direct'));
  const version = ((await db('content.release').where({ id: direct }).first('version')) as { version: number }).version;
  const transaction = await measure(`baseline: the release's transaction alone`, 1, 1, async () => {
    const outcome = await publishRelease(db, { id: direct, version, actor: { id: 'bench-editor', name: null } });
    if (outcome.status !== 'PUBLISHED') throw new Error(`release: ${JSON.stringify(outcome.failures)}`);
  });

  const release = await releaseOf('release', await pages('release'));
  const oneCall = await measure(`platform: one release of ${size}`, 1, 1, async () => {
    const answer = await call('POST', `/api/content/releases/${release}/publish`);
    if (answer.status !== 200) throw new Error(`release: ${answer.status} ${JSON.stringify(answer.body)}`);
  });
  const published = (await db(PAGE.table).where({ site_id: 'release', status: 'PUBLISHED' }).count('* as n')) as Array<{ n: string }>;
  if (Number(published[0].n) !== size) throw new Error(`the release published ${published[0].n} of ${size} pages`);

  const seconds = (measured: Measured) => (measured.wallMs / 1000).toFixed(2);
  console.log(`  ${transaction.name.padEnd(44)} ${seconds(transaction).padStart(8)} s for ${size} pages`);
  console.log(`  ${oneCall.name.padEnd(44)} ${seconds(oneCall).padStart(8)} s for ${size} pages (goal < 2 s)`);
  console.log(`  ${singles.name.padEnd(44)} ${seconds(singles).padStart(8)} s for ${size} pages`);
  console.log(report(singles));
  console.log(
    `  peak memory: approvals worker ${peakMemoryMb(worker.pid!).toFixed(0)} MiB, this process (API and baseline) ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`,
  );
  console.log(
    `  one release against ${size} single publishes: ${(singles.wallMs / oneCall.wallMs).toFixed(1)}x faster; against its transaction alone: ${(oneCall.wallMs / transaction.wallMs).toFixed(2)}x`,
  );
  await platform.stop();
}

/** Both Temporal floors, on the platform's server and namespace, with a worker process of their own. */
async function temporalFloor(platform: BenchPlatform, count: number, concurrency: number): Promise<{ open: Measured; guarded: Measured; peakMb: number }> {
  const { worker, client } = await startFloor(platform);
  const open = await measure('Temporal floor: one local activity', count, concurrency, async (i) => {
    await client.workflow.execute(oneLocalActivity, { taskQueue: FLOOR_QUEUE, workflowId: `floor-open-${i}-${crypto.randomUUID()}`, args: [String(i)] });
  });
  const guarded = await measure('Temporal floor: one validated Update, two local activities', count, concurrency, (i) => approvalFloorRun(client, String(i)));
  const peakMb = peakMemoryMb(worker.pid!);
  worker.kill('SIGTERM');
  return { open, guarded, peakMb };
}

void main();
