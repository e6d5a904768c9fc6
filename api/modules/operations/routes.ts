import { Type } from '@sinclair/typebox';
import { Registry } from 'prom-client';
import { Connection } from '@temporalio/client';
import { clientTlsOf } from '../../../temporal-config/server-certificates';
import { AppDeps } from '../../deps';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { problemBody } from '../../http/problem';
import { pingDatabase } from '../../../data/db';
import { listJobLogs } from '../../../data/scheduler-job-log';
import { JOB_OUTCOMES, NO_SITE } from '../../../domain/job-log';
import { Instant, Nullable, SiteId } from '../../http/common-schemas';
import { pageQueryFields, pageSchema, presentPage } from '../../http/pagination';
import { edgeIsReady, edgeMetrics } from '../../../edge/admin';
import { baseImageState } from '../../../adapters/deploy/jre-base-image';
import { sharedWhileFresh, within } from '../../../lib/within';

type CheckState = 'up' | 'down' | 'not configured';

const READINESS_MAX_AGE_MS = 2000;

async function check(probe: () => Promise<unknown>): Promise<CheckState> {
  try {
    await within(probe(), 3000);
    return 'up';
  } catch {
    return 'down';
  }
}

const ReadinessSchema = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('not ready')]),
  checks: Type.Object({
    database: Type.String(),
    temporal: Type.String(),
    docker: Type.String(),
    edge: Type.String(),
    /** Each node of a Temporal cluster (TEMPORAL_NODES), by name: one down does not make the platform unready while the cluster answers. */
    temporalNodes: Type.Optional(Type.Record(Type.String(), Type.String())),
    /** Where JAR deploys build their base image from Debian packages (npm start): up, missing (built on need), or unavailable with the fix. Never makes the platform unready. */
    jarBaseImage: Type.Optional(Type.String()),
  }),
});

const JobLogSchema = Type.Object({
  id: Type.String(),
  siteId: Type.String(),
  jobName: Type.String(),
  status: Type.Union(JOB_OUTCOMES.map((outcome) => Type.Literal(outcome))),
  startedAt: Instant,
  finishedAt: Nullable(Instant),
  rowsAffected: Type.Integer(),
  message: Nullable(Type.String()),
});

const NotReadySchema = Type.Object({
  type: Type.String(),
  title: Type.String(),
  status: Type.Literal(503),
  detail: Type.String(),
  code: Type.Literal('NOT_READY'),
  checks: ReadinessSchema.properties.checks,
});

type OperationsArgs = { deps: AppDeps; metrics: Registry; openapi: () => unknown };
type CheckStates = Awaited<ReturnType<typeof probeAll>>;
type NodeTls = ReturnType<typeof clientTlsOf> | false;

/** Each node's own frontend, asked directly (not through the address in front of them), by name. */
async function temporalNodesCheck(deps: AppDeps, nodeTls: NodeTls): Promise<{ temporalNodes?: Record<string, CheckState> }> {
  const temporalNodes = deps.config.temporal.nodes;
  if (temporalNodes.length === 0) return {};
  const states = await Promise.all(
    temporalNodes.map(async (node) =>
      check(async () => {
        const connection = await Connection.connect({ address: node.address, connectTimeout: 1000, tls: nodeTls });
        try {
          await connection.workflowService.getSystemInfo({});
        } finally {
          await connection.close();
        }
      }),
    ),
  );
  return { temporalNodes: Object.fromEntries(temporalNodes.map((node, index) => [node.name, states[index]])) };
}

/** Only where JAR deploys build their base image (npm start): never a reason to be unready, but said. */
async function jarBaseImageCheck(deps: AppDeps, docker: CheckState): Promise<{ jarBaseImage?: string }> {
  if (deps.config.deploy.baseImageBuild !== 'debian' || docker !== 'up') return {};
  const found = await within(baseImageState(deps.docker.docker, deps.config.deploy.baseImage), 3000).catch(() => null);
  if (found === null) return { jarBaseImage: 'unknown' };
  if (found.state === 'present') return { jarBaseImage: 'up' };
  return {
    jarBaseImage: found.state === 'buildable' ? 'missing: built from Debian packages before the first JAR deploy runs' : `unavailable: ${found.reason}`,
  };
}

/** Every part the platform needs, asked at once. */
async function probeAll(deps: AppDeps, nodeTls: NodeTls) {
  const edgeAdminUrl = deps.config.edge.adminUrl;
  const docker = deps.docker.configured ? deps.docker.ping().then((up): CheckState => (up ? 'up' : 'down')) : Promise.resolve<CheckState>('not configured');
  const [database, temporal, dockerState, edge, jarBaseImage, temporalNodes] = await Promise.all([
    check(() => pingDatabase(deps.db)),
    check(() => deps.temporal.connection.workflowService.getSystemInfo({})),
    docker,
    edgeAdminUrl
      ? check(async () => {
          if (!(await edgeIsReady(edgeAdminUrl))) throw new Error('edge not ready');
        })
      : Promise.resolve<CheckState>('not configured'),
    docker.then((state) => jarBaseImageCheck(deps, state)),
    temporalNodesCheck(deps, nodeTls),
  ]);
  return { database, temporal, docker: dockerState, edge, ...temporalNodes, ...jarBaseImage };
}

/** The checks behind /readyz, shared between callers while they are fresh. */
function readinessOf(deps: AppDeps): () => Promise<CheckStates> {
  // Read once, when the routes are made: the CA file is not read again on each probe.
  const nodeTls = clientTlsOf(deps.config.temporal.tlsCaFile) ?? false;
  // Anyone may call /readyz: it answers from checks at most READINESS_MAX_AGE_MS old, and callers meanwhile
  // share one probe, so no caller can make it hit the database, Temporal and Docker at will.
  return sharedWhileFresh(READINESS_MAX_AGE_MS, () => probeAll(deps, nodeTls));
}

/** Liveness and readiness: is the process up, and can it reach what it needs. */
function healthRoutes(readiness: () => Promise<CheckStates>): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/healthz',
      tag: 'operations',
      summary: 'The process is alive',
      access: access.public,
      responses: { 200: { description: 'alive', schema: Type.Object({ status: Type.Literal('ok') }) } },
      errors: [],
      handler: async (ctx) => {
        ctx.body = { status: 'ok' };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/readyz',
      tag: 'operations',
      summary: 'Database, Temporal and (where configured) Docker and the edge (Envoy) are reachable',
      access: access.public,
      responses: {
        200: { description: 'ready', schema: ReadinessSchema },
        503: { description: 'NOT_READY: a part is down', schema: NotReadySchema, contentType: 'application/problem+json' },
      },
      errors: ['NOT_READY'],
      handler: async (ctx) => {
        const checks = await readiness();
        const down = Object.entries(checks)
          .filter(([, state]) => state === 'down')
          .map(([name]) => name);
        if (down.length > 0) {
          ctx.status = 503;
          ctx.type = 'application/problem+json';
          ctx.body = { ...problemBody('NOT_READY', `Not ready: ${down.join(', ')} unreachable.`), checks };
          return;
        }
        ctx.body = { status: 'ready', checks };
      },
    }),
  ];
}

/** What tools read about the API: its metrics and its OpenAPI document. */
function metricsRoutes(args: OperationsArgs): AnyRoute[] {
  const { deps } = args;
  return [
    defineRoute({
      method: 'get',
      path: '/metrics',
      tag: 'operations',
      summary: "Prometheus metrics: the API's, then the edge's (Envoy's statistics, every name `envoy_…`) where there is one",
      // Envoy's statistics name every deployed service and its traffic: an operator's, or a scraper's with the internal token.
      access: access.rolesOrInternal('ADMIN'),
      responses: { 200: { description: 'Prometheus text format', contentType: 'text/plain', schema: Type.String() } },
      errors: [],
      handler: async (ctx) => {
        ctx.type = args.metrics.contentType;
        const own = await args.metrics.metrics();
        const edge = deps.config.edge.adminUrl ? await edgeMetrics(deps.config.edge.adminUrl) : null;
        ctx.body =
          deps.config.edge.adminUrl && edge === null
            ? `${own}\n# the edge's statistics are missing: its admin did not answer\n`
            : `${own}${edge ? `\n${edge}` : ''}`;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/openapi.json',
      tag: 'operations',
      summary: 'The OpenAPI 3.1 document of every platform endpoint',
      access: access.public,
      responses: {
        200: {
          description: 'OpenAPI document',
          schema: Type.Object({
            openapi: Type.Literal('3.1.0'),
            info: Type.Object({ title: Type.String(), version: Type.String() }),
            paths: Type.Record(Type.String(), Type.Unknown()),
          }),
        },
      },
      errors: [],
      handler: async (ctx) => {
        ctx.body = args.openapi();
      },
    }),
  ];
}

/** The log of what the scheduled and on-demand jobs did. */
function jobLogRoutes(deps: AppDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/settings/scheduler-job-logs',
      tag: 'operations',
      summary: 'What the scheduled and on-demand jobs did, per run and site, newest first; filtered by job, site and outcome',
      access: access.roles('ADMIN'),
      query: Type.Object({
        ...pageQueryFields,
        // `_platform`: the runs of jobs that belong to no site (the deploy reconcile).
        siteId: Type.Optional(Type.Union([SiteId, Type.Literal(NO_SITE)])),
        job: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        outcome: Type.Optional(Type.Union(JOB_OUTCOMES.map((outcome) => Type.Literal(outcome)))),
      }),
      responses: { 200: { description: 'a page of job runs', schema: pageSchema(JobLogSchema) } },
      errors: [],
      handler: async (ctx, { query }) => {
        const page = await listJobLogs(deps.db, { siteId: query.siteId, job: query.job, outcome: query.outcome, page: query });
        ctx.body = presentPage(page, (row) => ({
          id: String(row.id),
          siteId: row.site_id,
          jobName: row.job_name,
          status: row.status,
          startedAt: new Date(row.started_at).toISOString(),
          finishedAt: row.finished_at ? new Date(row.finished_at).toISOString() : null,
          rowsAffected: Number(row.rows_affected),
          message: row.message,
        }));
      },
    }),
  ];
}

/** Who the caller is, as the gateway told us. */
function identityRoutes(): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/directory/me',
      tag: 'operations',
      summary: 'The caller as the platform sees it, read from the gateway headers',
      access: access.user,
      responses: {
        200: {
          description: 'identity',
          schema: Type.Object({
            id: Type.String(),
            name: Type.String(),
            email: Type.String(),
            roles: Type.Array(Type.String()),
            sites: Type.Array(Type.String()),
            siteId: Type.Union([Type.String(), Type.Null()]),
          }),
        },
      },
      errors: [],
      handler: async (ctx, { identity }) => {
        ctx.body = identity;
      },
    }),
  ];
}

/** Liveness, readiness, metrics, the OpenAPI document, and who-am-I. */
export function operationsRoutes(args: { deps: AppDeps; metrics: Registry; openapi: () => unknown }): AnyRoute[] {
  const { deps } = args;
  const readiness = readinessOf(deps);
  return [...healthRoutes(readiness), ...metricsRoutes(args), ...jobLogRoutes(deps), ...identityRoutes()];
}
