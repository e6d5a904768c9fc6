import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { COMPONENT_TYPES } from '../../data/content/component-types';
import { ALL_TASK_QUEUES } from '../../domain/task-queues';
import { fuzzerProblem, PINNED_SCHEMATHESIS, TOOLS_SCHEMATHESIS } from '../../scripts/fuzzer';
import { createComponentThroughApi, FIXTURES } from '../content/component-fixtures';
import { call } from '../support/http';
import { attachPlatform, RunningApi, TestPlatform } from '../support/platform';

/**
 * schemathesis over /api/openapi.json, every operation, with an ADMIN token (the internal token for the
 * internal routes): no answer may be a server error or break its declared schema, status or media type.
 * Seeded entities are pinned as the path parameters of the routes that take them, so the fuzzer reaches
 * past the 404s; the stateful phase follows the document's links from each create.
 *
 * The suite runs a bounded fuzz: a fixed seed, a few examples per operation, and a time budget for the
 * whole run. Examples that failed before are kept in the corpus folder beside this file (Hypothesis's
 * example database) and replayed first. `npm run fuzz` is the long run: many examples per
 * operation, no budget, the same corpus, so what it finds is replayed by every suite after it.
 */
/** FUZZ_SEED runs another seed (the suite runs 1). */
const SEED = Number(process.env.FUZZ_SEED ?? 1);
const LONG_RUN = process.env.OPSFLOW_FUZZ_LONG === '1';
/** Enough for every operation's first pass well within the budget (261 operations, 2 cores). */
const EXAMPLES_PER_OPERATION = LONG_RUN ? 200 : 10;
/**
 * The suite's budget for the whole schemathesis run (`--max-time`): its phases share it, and fuzzing and
 * stateful testing repeat until it is spent. Measured alone on 2026-12-05: examples 6 s, coverage 35 s,
 * fuzzing 70 s, stateful 8 s, every one of 261 operations tested. The test still fails unless every
 * operation was tested, so a budget spent too early shows.
 */
const TIME_BUDGET_SECONDS = LONG_RUN ? null : 120;
const CORPUS = path.join(__dirname, 'fuzz-corpus');
const SITE = 'fuzz-site';
/**
 * How long the whole fuzz may take before it is killed: the budget and the first pass with room to spare;
 * the long run has an hour.
 */
const FUZZ_TIMEOUT_MS = LONG_RUN ? 60 * 60 * 1000 : 8 * 60 * 1000;

let platform: TestPlatform;
let api: RunningApi;
let workDir: string;

beforeAll(async () => {
  const problem = fuzzerProblem();
  if (problem) throw new Error(problem);
  platform = await attachPlatform();
  api = await platform.startApi();
  // Workers, so that publishes, sends, deploys and archive runs the fuzzer starts are carried out, not left to time out.
  await platform.startWorker(ALL_TASK_QUEUES);
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-fuzz-'));
});

afterAll(async () => {
  await platform?.close();
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
});

/** Path parameters pinned to a seeded entity, for the routes of one path (and methods). */
interface Pinned {
  path: string;
  methods?: string[];
  parameters: Record<string, string | number>;
  /** A tail every collection may have; skipped where this one does not. */
  optional?: boolean;
}

/** One seeded entity of each kind, as the path parameters of the routes that take it. */
async function seed(admin: string): Promise<Pinned[]> {
  const ok = async (what: string, answer: Promise<{ status: number; body: { id?: string } & Record<string, unknown>; text: string }>) => {
    const settled = await answer;
    if (settled.status >= 300) throw new Error(`seeding ${what}: ${settled.status} ${settled.text}`);
    return settled.body;
  };
  const pinned: Pinned[] = [];
  // Every route under a collection's `{id}` but its DELETE, which would take the entity from the others.
  const underId = (collection: string, id: string) => {
    const methods = ['GET', 'PUT', 'POST'];
    pinned.push({ path: `${collection}/{id}`, methods, parameters: { id } });
    for (const tail of ['history', 'history/{rev}', 'restore/{rev}', 'publish', 'archive', 'preview', 'approval-callback', 'download']) {
      pinned.push({ path: `${collection}/{id}/${tail}`, parameters: { id, rev: 1 }, optional: true });
    }
  };

  for (const channel of ['email', 'sms'] as const) {
    const body =
      channel === 'email'
        ? { configName: 'capture', transport: 'SMTP', smtpHost: '127.0.0.1', smtpPort: platform.info.mail.smtpPort, isActive: true }
        : {
            configName: 'peer',
            transport: 'REST',
            serviceUrl: 'http://127.0.0.1:9/sms',
            restMethodType: 'POST',
            sampleRequest: '{"to":"{{phoneto}}"}',
            isActive: true,
          };
    const config = await ok(`${channel} config`, call(api.url, 'POST', `/api/settings/${channel}`, { token: admin, body }));
    pinned.push({ path: `/api/settings/${channel}/{id}`, methods: ['GET', 'PUT'], parameters: { id: config.id! } });
    pinned.push({ path: `/api/settings/${channel}/{id}/activate`, parameters: { id: config.id! } });
  }
  // Portlets need approval, so the seeded portlet's publish opens one for the approval routes.
  const approvalPolicy = await ok(
    'approval policy',
    call(api.url, 'POST', '/api/workflow/approvals/policies', { token: admin, body: { componentType: 'PORTLET', siteId: SITE, enabled: true } }),
  );
  pinned.push({ path: '/api/workflow/approvals/policies/{id}', methods: ['GET', 'PUT'], parameters: { id: approvalPolicy.id! } });

  for (const type of COMPONENT_TYPES) {
    const fixture = FIXTURES[type.type];
    const created = await ok(
      type.type,
      createComponentThroughApi({ apiUrl: api.url, token: admin, type: type.type, collection: type.collection, siteId: SITE, body: fixture.create }),
    );
    const published = await ok(`${type.type} publish`, call(api.url, 'POST', `${type.collection}/${created.id}/publish`, { token: admin }));
    underId(type.collection, created.id!);
    if (type.publicPath)
      pinned.push({ path: `/api/public/sites/{siteId}/${type.publicPath}/{slug}`, parameters: { siteId: SITE, slug: String(fixture.create.slug) } });
    if (published.correlationId) {
      for (const tail of ['', '/decide'])
        pinned.push({ path: `/api/workflow/approvals/{correlationId}${tail}`, parameters: { correlationId: String(published.correlationId) } });
    }
    if (type.type === 'EMAIL_TEMPLATE') {
      pinned.push({ path: '/api/email/send/{templateId}/logs', parameters: { templateId: created.id! } });
      const sent = await ok(
        'email send',
        call(api.url, 'POST', '/api/email/send', { token: admin, body: { templateId: created.id, to: 'fuzz@example.test', siteId: SITE } }),
      );
      pinned.push({ path: '/api/email/logs/{id}/retry', parameters: { id: String(sent.logId) } });
    }
  }
  if (!pinned.some((entry) => entry.path === '/api/workflow/approvals/{correlationId}')) throw new Error('seeding: the portlet publish opened no approval');

  const user = await ok(
    'user',
    call(api.url, 'POST', '/api/directory/users', { token: admin, body: { email: 'fuzz@example.test', name: 'Fuzz', roles: ['EDITOR'], siteIds: [SITE] } }),
  );
  pinned.push({ path: '/api/directory/users/{id}', methods: ['GET', 'PUT'], parameters: { id: user.id! } });
  const archivePolicy = await ok(
    'archive policy',
    call(api.url, 'POST', '/api/settings/archive-policies', { token: admin, body: { logType: 'EMAIL_LOG', siteId: SITE, retentionDays: 90, enabled: true } }),
  );
  pinned.push({ path: '/api/settings/archive-policies/{id}', methods: ['GET', 'PUT'], parameters: { id: archivePolicy.id! } });
  // A core service: its routes answer (SERVICE_NOT_DYNAMIC where they would change it) instead of 404.
  for (const tail of ['', '/scale', '/logs', '/deployments', '/rollback'])
    pinned.push({ path: `/api/infra/services/{name}${tail}`, methods: tail === '' ? ['GET'] : undefined, parameters: { name: 'infra' } });
  pinned.push({ path: '/api/settings/archive-runs/{workflowId}', parameters: { workflowId: 'archive:EMAIL_LOG' } });
  return pinned;
}

const toml = (value: string | number) => (typeof value === 'number' ? String(value) : JSON.stringify(value));

test(
  `schemathesis ${PINNED_SCHEMATHESIS} (seed ${SEED}, ${EXAMPLES_PER_OPERATION} examples per operation) finds no server error and no answer that breaks its declared schema`,
  async () => {
    const admin = await platform.token({ sub: 'fuzzer', name: 'Fuzzer', roles: ['ADMIN'], sites: [SITE] });
    const pinned = await seed(admin);
    const document = (await call(api.url, 'GET', '/api/openapi.json')).body as {
      paths: Record<string, Record<string, { security?: Array<Record<string, unknown>>; responses?: Record<string, unknown> }>>;
    };
    const internalOnly = Object.entries(document.paths).flatMap(([route, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => operation.security?.length === 1 && 'internalToken' in operation.security[0])
        .map(([method]) => ({ route, method: method.toUpperCase() })),
    );
    // The long run adds to the committed corpus; the suite replays a copy, leaving the tree as it was.
    const corpus = LONG_RUN ? CORPUS : path.join(workDir, 'corpus');
    if (!LONG_RUN) fs.cpSync(CORPUS, corpus, { recursive: true });
    const lines = [
      `seed = ${SEED}`,
      `headers = { Authorization = ${toml(`Bearer ${admin}`)} }`,
      '[generation]',
      `max-examples = ${EXAMPLES_PER_OPERATION}`,
      `database = ${toml(corpus)}`,
      '[checks]',
      'enabled = false',
      'not_a_server_error.enabled = true',
      'response_schema_conformance.enabled = true',
      'status_code_conformance.enabled = true',
      'content_type_conformance.enabled = true',
    ];
    // One block per path: its pinned parameters, and the internal token where the path is internal-only.
    const internalHeader = `headers = { Authorization = ${toml(`Bearer ${platform.config.secrets.internalToken}`)} }`;
    const pinnedPaths = new Set(pinned.map((entry) => entry.path));
    // Operations are named exactly (`METHOD /path`): schemathesis joins separate include filters with OR.
    const names = (route: string, methods?: string[]) =>
      Object.keys(document.paths[route])
        .map((method) => method.toUpperCase())
        .filter((method) => !methods || methods.includes(method))
        .map((method) => `${method} ${route}`);
    for (const { path: route, methods, parameters, optional } of pinned) {
      if (!document.paths[route] && optional) continue;
      if (!document.paths[route]) throw new Error(`seeded parameters for ${route}, which the document does not have`);
      lines.push('[[operations]]', `include-name = [${names(route, methods).map(toml).join(', ')}]`);
      lines.push(
        `parameters = { ${Object.entries(parameters)
          .map(([name, value]) => `${name} = ${toml(value)}`)
          .join(', ')} }`,
      );
      if (internalOnly.some((operation) => operation.route === route)) lines.push(internalHeader);
    }
    for (const { route, method } of internalOnly) {
      if (!pinnedPaths.has(route)) lines.push('[[operations]]', `include-name = ${toml(`${method} ${route}`)}`, internalHeader);
    }
    // An operation that declares 502 (a peer of the platform's failed) may answer it when the fuzzer points it
    // at a peer that does not answer: the SOAP invoke, by the contract. The archive sinks declare it for an S3
    // store that gives back other bytes; the fuzzed platform's sink is its file system, so no 5xx of them passes.
    const declared502 = Object.entries(document.paths).flatMap(([route, operations]) =>
      Object.entries(operations as Record<string, { responses?: Record<string, unknown> }>)
        .filter(([, operation]) => operation.responses?.['502'])
        .map(([method]) => `${method.toUpperCase()} ${route}`),
    );
    const archiveSinks = ['POST /api/assets/internal/archive', 'POST /api/assets/internal/archive-staged'];
    expect(declared502).toEqual([...archiveSinks, 'POST /api/integration/soap-components/{id}/invoke']);
    const gateways = declared502.filter((name) => !archiveSinks.includes(name));
    for (const name of gateways) {
      if (pinnedPaths.has(name.split(' ')[1])) throw new Error(`${name} is pinned too: give its block the expected 502`);
      lines.push(
        '[[operations]]',
        `include-name = ${toml(name)}`,
        '[operations.checks.not_a_server_error]',
        'expected-statuses = ["2xx", "3xx", "4xx", "502"]',
      );
    }
    const configFile = path.join(workDir, 'schemathesis.toml');
    fs.writeFileSync(configFile, `${lines.join('\n')}\n`);

    // Asynchronous: the API under test answers from this process.
    const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const budget = TIME_BUDGET_SECONDS ? ['--max-time', String(TIME_BUDGET_SECONDS)] : [];
      const child = spawn(TOOLS_SCHEMATHESIS, ['--config-file', configFile, 'run', `${api.url}/api/openapi.json`, '--no-color', ...budget], { cwd: workDir });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const timer = setTimeout(() => child.kill('SIGKILL'), FUZZ_TIMEOUT_MS - 30 * 1000);
      child.on('close', (status) => {
        clearTimeout(timer);
        resolve({ status, stdout, stderr });
      });
    });
    const output = `${run.stdout}\n${run.stderr}`;
    fs.writeFileSync(path.join(os.tmpdir(), 'opsflow-fuzz-last.log'), output);
    const summary = output.slice(output.lastIndexOf('SUMMARY'));
    // The whole report when anything failed; the summary (operations, phases, cases) otherwise.
    expect({ exitCode: run.status, report: run.status === 0 ? summary : output }).toEqual({ exitCode: 0, report: summary });
    // Every operation of the document was tested, not only selected.
    const selected = /Selected: (\d+)\/(\d+)/.exec(summary);
    expect(selected?.[1]).toBe(selected?.[2]);
    expect(summary).toContain(`Tested: ${selected?.[1]}`);
    expect(Number(selected?.[1])).toBeGreaterThan(150);
    expect(summary).toMatch(/\d+ generated, \d+ passed/);
  },
  FUZZ_TIMEOUT_MS,
);
