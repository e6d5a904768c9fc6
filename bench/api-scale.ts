/**
 * `npx tsx bench/api-scale.ts [--callers 16,64,256] [--rounds 3] [--seconds 5] [--pages 256]` (#63): a
 * read route and a write route under many callers at once, through the edge as production runs it (the API
 * a process of its own behind Envoy). `wrk` (1 thread) keeps that many connections busy for `--seconds`:
 * - read: a site's pages, `GET /api/content/pages?siteId=…&limit=50`;
 * - write: an edit of a page's draft, `PUT /api/content/pages/{id}` (a new revision each time), spread over
 *   `--pages` pages, so that callers seldom wait on the same row.
 * Rounds alternate the caller counts, so a machine getting faster or slower weighs on all. Printed for
 * each: answers a second, p50 and p99 (medians of the rounds), every error (not 2xx, or a socket error),
 * the API's and Envoy's CPU per request, and each process's peak memory.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { signToken } from '../api/http/sign-token';
import { startApiBehindEdge } from './edge-platform';
import { cpuMicros, median, wrk } from './load';
import { peakMemoryMb, startBenchPlatform, runBench } from './support';

const SITE = 'api-scale';

/** Creates `count` pages in the bench's site through the edge; their ids. */
async function seedPages(edgeUrl: string, token: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 1; n <= count; n++) {
    const answer = await fetch(`${edgeUrl}/api/content/pages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ siteId: SITE, name: `page-${n}`, slug: `page-${n}`, title: `Page ${n}`, data: { n } }),
    });
    const body = (await answer.json()) as { id: string };
    if (answer.status !== 201) throw new Error(`page ${n} was not created: ${answer.status} ${JSON.stringify(body)}`);
    ids.push(body.id);
  }
  return ids;
}

/** wrk's script for the write route: each request edits the next page of the list, with a title of its own. */
function editScript(dir: string, ids: string[]): string {
  const file = path.join(dir, 'edit.lua');
  fs.writeFileSync(
    file,
    [
      `local ids = { ${ids.map((id) => `"${id}"`).join(', ')} }`,
      'local n = 0',
      // Beside the -H headers (the token): a table given to wrk.format would take their place.
      'wrk.headers["content-type"] = "application/json"',
      'request = function()',
      '  n = n + 1',
      '  local k = (n % #ids) + 1',
      `  local body = '{"name": "page-' .. k .. '", "slug": "page-' .. k .. '", "title": "Edit ' .. n .. '", "data": {"n": ' .. k .. '}}'`,
      '  return wrk.format("PUT", "/api/content/pages/" .. ids[k], nil, body)',
      'end',
      '',
    ].join('\n'),
  );
  return file;
}

type Measured = { perSecond: number; p50: number; p99: number; errors: number; apiCpu: number; envoyCpu: number };

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      callers: { type: 'string', default: '16,64,256' },
      rounds: { type: 'string', default: '3' },
      seconds: { type: 'string', default: '5' },
      pages: { type: 'string', default: '256' },
    },
  });
  if (spawnSync('wrk', ['--version']).error) throw new Error("bench/api-scale needs wrk, Debian's HTTP load generator: apt-get install wrk");
  const callers = values.callers.split(',').map(Number);
  const rounds = Number(values.rounds);
  const seconds = Number(values.seconds);
  console.log(`bench/api-scale: ${callers.join(', ')} callers through the edge, ${rounds} rounds of ${seconds} s each (${os.cpus().length} cores)`);
  const platform = await startBenchPlatform();
  const scripts = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-api-scale-'));
  let edge: Awaited<ReturnType<typeof startApiBehindEdge>> | null = null;
  try {
    edge = await startApiBehindEdge(platform);
    const running = edge;
    const token = await signToken({ secret: platform.config.identity.jwtSecret, claims: { sub: 'api-scale-editor', roles: ['EDITOR'], sites: [SITE] } });
    const ids = await seedPages(edge.edgeUrl, token, Number(values.pages));
    const routes = [
      { name: `read (GET a site's pages)`, url: `${edge.edgeUrl}/api/content/pages?siteId=${SITE}&limit=50`, script: undefined },
      { name: `write (PUT a page's draft)`, url: `${edge.edgeUrl}/`, script: editScript(scripts, ids) },
    ];
    const headers = { authorization: `Bearer ${token}` };
    // The edit the script sends, once by hand: a bench of refusals would measure nothing.
    const edited = await fetch(`${edge.edgeUrl}/api/content/pages/${ids[0]}`, {
      method: 'PUT',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'page-1', slug: 'page-1', title: 'Edit 0', data: { n: 1 } }),
    });
    if (edited.status !== 200) throw new Error(`the write route refused the bench's edit: ${edited.status} ${await edited.text()}`);
    // Warmed first: the API's and Envoy's first requests are not what is measured.
    for (const route of routes) wrk({ url: route.url, headers, seconds: 2, connections: 16, script: route.script });
    const results = new Map<string, Measured[]>();
    for (let round = 1; round <= rounds; round++) {
      for (const route of routes) {
        for (const count of callers) {
          const before = { api: cpuMicros(running.api.pid!), envoy: cpuMicros(running.edgePid) };
          const result = wrk({ url: route.url, headers, seconds, connections: count, script: route.script });
          const served = result.answered + result.socketErrors;
          const measured: Measured = {
            ...result,
            apiCpu: (cpuMicros(running.api.pid!) - before.api) / served,
            envoyCpu: (cpuMicros(running.edgePid) - before.envoy) / served,
          };
          console.log(
            `    r${round} ${route.name}, ${String(count).padStart(3)} callers: ${result.perSecond.toFixed(0)}/s, p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms, ` +
              `errors ${result.errors} (${result.non2xx} not 2xx, ${result.socketErrors} socket)`,
          );
          results.set(`${route.name} ${count}`, [...(results.get(`${route.name} ${count}`) ?? []), measured]);
        }
      }
    }
    console.log(`  medians of ${rounds} rounds:`);
    for (const route of routes) {
      for (const count of callers) {
        const runs = results.get(`${route.name} ${count}`)!;
        const of = (key: keyof Measured) => median(runs.map((run) => run[key]));
        console.log(
          `    ${route.name}, ${String(count).padStart(3)} callers: ${of('perSecond').toFixed(0)}/s, p50 ${of('p50').toFixed(1)} ms, p99 ${of('p99').toFixed(1)} ms, ` +
            `errors ${runs.map((run) => run.errors).join('/')}; CPU a request: API ${of('apiCpu').toFixed(0)} µs, Envoy ${of('envoyCpu').toFixed(0)} µs`,
        );
      }
    }
    console.log(`  peak memory: API ${peakMemoryMb(running.api.pid!).toFixed(0)} MiB, Envoy ${peakMemoryMb(running.edgePid).toFixed(0)} MiB`);
  } finally {
    await edge?.stop();
    fs.rmSync(scripts, { recursive: true, force: true });
    await platform.stop();
  }
}

runBench(main);
