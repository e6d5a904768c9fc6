/**
 * `npx tsx bench/scale.ts [--sizes 1000,10000,100000] [--calls 40]`: the read and write routes of approvals
 * and content, with 1x, 10x and 100x rows behind them, side by side in one run (#63). At each size, rows are
 * added until there are that many, then each route is called `--calls` times; p50 and p99 are printed,
 * beside the same data function called without HTTP (its floor) at the largest size:
 * - the manager's queue (`GET /api/workflow/approvals`): the first page and a page half way down, with
 *   that many PENDING requests in the site, each for a page of its own;
 * - the pages of a site (`GET /api/content/pages`): the first page and one half way down;
 * - one page's history with that many revisions: its first page, one half way down, a compare of its first
 *   and its last revision, and a restore of its first.
 * Rows are written with SQL in batches: the routes are what is measured, not the writes.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { signToken } from '../api/http/sign-token';
import { encodeCursor } from '../data/paging';
import { approvalQueue } from '../data/approvals/approvals';
import { componentType } from '../data/content/component-types';
import { listComponents } from '../data/content/components';
import { historyOf } from '../data/content/revisions';
import { BenchPlatform, quantile, startBenchPlatform } from './support';

const PAGE = componentType('PAGE')!;
const SITE = 'scale';
const HISTORY_PAGE = '00000000-0000-4000-8000-000000000001';

type Timed = { name: string; ms: number[] };

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: '1000,10000,100000' },
      calls: { type: 'string', default: '40' },
      explain: { type: 'boolean', default: false },
    },
  });
  const sizes = values.sizes.split(',').map(Number);
  const calls = Number(values.calls);
  console.log(`bench/scale: approvals and content at ${sizes.join(', ')} rows, ${calls} calls each (${os.cpus().length} cores)`);
  const platform = await startBenchPlatform();
  const sign = (claims: Parameters<typeof signToken>[0]['claims']) => signToken({ secret: platform.config.identity.jwtSecret, claims });
  const tokens = {
    manager: await sign({ sub: 'scale-manager', roles: ['MANAGER'], sites: [SITE] }),
    editor: await sign({ sub: 'scale-editor', roles: ['EDITOR'], sites: [SITE] }),
  };
  await platform.db.raw(`insert into content.page (id, site_id, name, slug, title, data) values (?, ?, 'history', 'history', 'History', '{"n": 0}')`, [
    HISTORY_PAGE,
    SITE,
  ]);
  const bySize = new Map<number, Timed[]>();
  let seeded = 0;
  for (const size of sizes) {
    await seedPages(platform, seeded, size);
    await seedRevisions(platform, size - seeded);
    seeded = size;
    await platform.db.raw('analyze');
    bySize.set(size, await measureRoutes(platform, tokens, size, calls));
  }
  const floors = await measureFloors(platform, sizes[sizes.length - 1], calls);
  if (values.explain) await explainHistory(platform, sizes[sizes.length - 1]);
  print(sizes, bySize, floors);
  await platform.stop();
  process.exit(0);
}

/** Pages `from + 1` to `to` of the site, each with one revision and a PENDING approval of it. */
async function seedPages(platform: BenchPlatform, from: number, to: number): Promise<void> {
  const { db } = platform;
  for (let start = from; start < to; start += 10000) {
    const end = Math.min(to, start + 10000);
    await db.raw(
      `with made as (
         insert into content.page (site_id, name, slug, title, data, status, created_at, updated_at)
         select ?, 'p' || g, 'p' || g, 'Page ' || g, jsonb_build_object('i', g, 'text', repeat('x', 200)), 'PENDING_APPROVAL',
                now() - g * interval '1 second', now() - g * interval '1 second'
         from generate_series(?::int + 1, ?::int) g returning *),
       rev as (insert into public.revinfo (user_id, user_name, site_id) values ('scale-editor', 'Scale Editor', ?) returning rev),
       audited as (insert into content.page_aud select made.*, rev.rev, 0 from made, rev returning id, rev, created_at)
       insert into workflow.approval (correlation_id, component_type, site_id, resource_id, revision, callback_path, requested_by, title, status, stages, workflow_id, created_at)
       select gen_random_uuid(), 'PAGE', ?, id::text, rev, '/api/content/pages/' || id || '/approval-callback', 'scale-editor', 'Page', 'PENDING',
              '[{"name": "Review", "role": "MANAGER"}]'::jsonb, 'publish:PAGE:' || id, created_at
       from audited`,
      [SITE, start, end, SITE, SITE],
    );
  }
}

/** `count` more revisions of the history page, each one edit of its data. */
async function seedRevisions(platform: BenchPlatform, count: number): Promise<void> {
  await platform.db.raw(
    `with revs as (
       insert into public.revinfo (user_id, user_name, site_id, revtstmp)
       select 'scale-editor', 'Scale Editor', ?, now() - (? - g) * interval '1 millisecond' from generate_series(1, ?) g returning rev)
     insert into content.page_aud
     select p.id, p.site_id, p.name, p.slug, p.title, jsonb_build_object('n', revs.rev), p.status, p.published_rev, p.published_at, p.created_by,
            p.updated_by, p.created_at, p.updated_at, p.published_snapshot, revs.rev, 1
     from content.page p, revs where p.id = ?`,
    [SITE, count, count, HISTORY_PAGE],
  );
}

/** Calls `one` once untimed (the route's first call compiles and caches), then `calls` times, one after another; each call's milliseconds. */
async function timed(name: string, calls: number, one: () => Promise<unknown>): Promise<Timed> {
  await one();
  const ms: number[] = [];
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    await one();
    ms.push(performance.now() - started);
  }
  return { name, ms };
}

async function measureRoutes(platform: BenchPlatform, tokens: { manager: string; editor: string }, size: number, calls: number): Promise<Timed[]> {
  const { db } = platform;
  const get = async (path: string, token: string, method = 'GET') => {
    const answer = await fetch(`${platform.apiUrl}${path}`, { method, headers: { authorization: `Bearer ${token}` } });
    if (answer.status !== 200) throw new Error(`${method} ${path}: ${answer.status} ${await answer.text()}`);
    return answer.json();
  };
  const half = Math.floor(size / 2);
  const approvalAt = (await db('workflow.approval')
    .where({ site_id: SITE })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'correlation_id', order: 'desc' },
    ])
    .offset(half)
    .first()) as { created_at: Date; correlation_id: string };
  const pageAt = (await db(PAGE.table)
    .where({ site_id: SITE })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .offset(half)
    .first()) as { created_at: Date; id: string };
  const revs = (await db(`${PAGE.table}_aud as a`)
    .join('public.revinfo as r', 'r.rev', 'a.rev')
    .where('a.id', HISTORY_PAGE)
    .orderBy('a.rev', 'asc')
    .select('a.rev', 'r.revtstmp')) as Array<{ rev: number; revtstmp: Date }>;
  const midRev = revs[revs.length - 1 - half];
  const cursor = (at: Date, id: string | number) => encodeURIComponent(encodeCursor({ at: at.toISOString(), id: String(id) }));
  const history = `/api/content/pages/${HISTORY_PAGE}`;
  return [
    await timed('approvals, first page', calls, () => get('/api/workflow/approvals?status=PENDING&limit=50', tokens.manager)),
    await timed('approvals, half way down', calls, () =>
      get(`/api/workflow/approvals?status=PENDING&limit=50&cursor=${cursor(approvalAt.created_at, approvalAt.correlation_id)}`, tokens.manager),
    ),
    await timed('pages, first page', calls, () => get(`/api/content/pages?siteId=${SITE}&limit=50`, tokens.editor)),
    await timed('pages, half way down', calls, () =>
      get(`/api/content/pages?siteId=${SITE}&limit=50&cursor=${cursor(pageAt.created_at, pageAt.id)}`, tokens.editor),
    ),
    await timed('history, first page', calls, () => get(`${history}/history?limit=50`, tokens.editor)),
    await timed('history, half way down', calls, () => get(`${history}/history?limit=50&cursor=${cursor(midRev.revtstmp, midRev.rev)}`, tokens.editor)),
    await timed('compare first and last revision', calls, () => get(`${history}/compare?from=${revs[0].rev}&to=${revs[revs.length - 1].rev}`, tokens.editor)),
    await timed('restore the first revision', Math.min(calls, 10), () => get(`${history}/restore/${revs[0].rev}`, tokens.editor, 'POST')),
  ];
}

/** The data functions behind the lists, without HTTP, at the largest size. */
async function measureFloors(platform: BenchPlatform, size: number, calls: number): Promise<Timed[]> {
  const { db } = platform;
  const page = { limit: 50 };
  return [
    await timed(`approvals, first page (data function, ${size})`, calls, () => approvalQueue(db, { sites: [SITE], status: 'PENDING', page })),
    await timed(`pages, first page (data function, ${size})`, calls, () => listComponents(db, { type: PAGE, siteId: SITE, page })),
    await timed(`history, first page (data function, ${size})`, calls, () => historyOf(db, PAGE, HISTORY_PAGE, page)),
  ];
}

/** `--explain`: PostgreSQL's plan of the history's page half way down, as historyOf asks it. */
async function explainHistory(platform: BenchPlatform, size: number): Promise<void> {
  const { db } = platform;
  const revs = (await db(`${PAGE.table}_aud`)
    .where({ id: HISTORY_PAGE })
    .orderBy('rev', 'desc')
    .offset(Math.floor(size / 2))
    .first('rev')) as { rev: number };
  const plan = (await db.raw(
    `explain (analyze, buffers) select a.rev, a.revtype, a.status, r.user_id, r.user_name, r.revtstmp, r.comment, r.revtstmp::text as "cursorAt"
       from content.page_aud as a inner join public.revinfo as r on r.rev = a.rev where a.id = ? and a.rev < ? and r.rev < ? order by a.rev desc limit 51`,
    [HISTORY_PAGE, revs.rev, revs.rev],
  )) as { rows: Array<{ 'QUERY PLAN': string }> };
  for (const row of plan.rows) console.log(`  plan: ${row['QUERY PLAN']}`);
}

const spread = (ms: number[]) => `${quantile(ms, 0.5).toFixed(1).padStart(7)} ${quantile(ms, 0.99).toFixed(1).padStart(7)}`;

function print(sizes: number[], bySize: Map<number, Timed[]>, floors: Timed[]): void {
  console.log(`  ${'route (ms: p50 p99)'.padEnd(36)}${sizes.map((size) => String(size).padStart(16)).join('')}   p99 100x/1x`);
  const names = bySize.get(sizes[0])!.map((row) => row.name);
  names.forEach((name, index) => {
    const cells = sizes.map((size) => spread(bySize.get(size)![index].ms).padStart(16)).join('');
    const growth = quantile(bySize.get(sizes[sizes.length - 1])![index].ms, 0.99) / quantile(bySize.get(sizes[0])![index].ms, 0.99);
    console.log(`  ${name.padEnd(36)}${cells}   ${growth.toFixed(2)}`);
  });
  for (const floor of floors) console.log(`  floor: ${floor.name.padEnd(50)} ${spread(floor.ms)}`);
}

void main();
