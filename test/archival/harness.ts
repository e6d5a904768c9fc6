import http from 'node:http';
import { AddressInfo } from 'node:net';
import pg from 'pg';
import { WorkflowFailedError } from '@temporalio/client';
import { ArchiveRunProgress } from '../../workflows/archival/definitions';
import { TestPlatform } from '../support/platform';
import { call } from '../support/http';
import { csvIds } from './seed';

/**
 * A real HTTP server in front of the API for the workers' uploads: it forwards everything, except that it
 * answers 500 for the archive uploads of the sites in `failSites`, whether the bytes are sent (the site is a
 * form field) or the API is to take a staged part (the site is the part's, read from the manifest). For the
 * sites in `unsharedSites` it answers a hand-over as an API without the workers' data folder does (404
 * ARCHIVE_PART_NOT_STAGED), so their bytes are sent. `seen` lists each upload's route and site.
 */
export async function startSinkProxy(
  apiUrl: string,
  db: TestPlatform['db'],
): Promise<{ url: string; failSites: Set<string>; unsharedSites: Set<string>; seen: Array<{ route: string; site?: string }>; close(): Promise<void> }> {
  const failSites = new Set<string>();
  const unsharedSites = new Set<string>();
  const seen: Array<{ route: string; site?: string }> = [];
  const target = new URL(apiUrl);
  const siteOf = async (url: string | undefined, body: Buffer): Promise<string | undefined> => {
    if (url === '/api/assets/internal/archive-staged') {
      const partId = (JSON.parse(body.toString('utf8')) as { partId?: string }).partId;
      return ((await db('settings.archive_part').where({ id: partId }).first('site_id')) as { site_id: string } | undefined)?.site_id;
    }
    return /name="siteId"\r\n\r\n([^\r]*)\r\n/.exec(body.toString('latin1'))?.[1];
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      const site = await siteOf(req.url, body).catch(() => undefined);
      seen.push({ route: req.url ?? '', site });
      if (site && unsharedSites.has(site) && req.url === '/api/assets/internal/archive-staged') {
        res.writeHead(404, { 'content-type': 'application/problem+json' });
        res.end(JSON.stringify({ type: 'about:blank', title: 'Not found', status: 404, detail: 'no staged file here', code: 'ARCHIVE_PART_NOT_STAGED' }));
        return;
      }
      if (site && failSites.has(site)) {
        res.writeHead(500, { 'content-type': 'application/problem+json' });
        res.end(JSON.stringify({ type: 'about:blank', title: 'Internal Server Error', status: 500, detail: 'storage unwritable', code: 'INTERNAL_ERROR' }));
        return;
      }
      const forward = http.request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, 'content-length': String(body.length) } },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on('error', () => res.destroy());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    failSites,
    unsharedSites,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Waits for an archive run to close and answers its report, whether it completed or failed. */
export async function archiveOutcome(platform: TestPlatform, workflowId: string, runId?: string): Promise<ArchiveRunProgress> {
  try {
    return (await platform.temporal.client.workflow.getHandle(workflowId, runId).result()) as ArchiveRunProgress;
  } catch (error) {
    if (error instanceof WorkflowFailedError && error.cause && 'details' in error.cause) {
      return (error.cause as { details: unknown[] }).details[0] as ArchiveRunProgress;
    }
    throw error;
  }
}

/**
 * Holds a SHARE lock on a log table itself, not its months: reads (the export) go on, deletes through the
 * table wait, and so does a month's detach. This pins a run between its confirmed upload and its delete (or
 * detach), where the durability tests strike. Its months stay unlocked, so a month's archive still opens
 * (it puts its late-row trigger on the month alone).
 */
export async function holdDeletes(databaseUrl: string, table: string): Promise<{ client: pg.Client; release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query('begin');
  await client.query(`lock table only ${table} in share mode`);
  return {
    client,
    release: async () => {
      await client.query('commit');
      await client.end();
    },
  };
}

/** Ends the database sessions stuck waiting on a lock, as PostgreSQL does once it sees their client is gone. */
export async function dropWaitingSessions(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(
    "select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()",
  );
  await client.end();
}

export async function sessionsWaitingOnLocks(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const { rows } = await client.query("select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'");
  await client.end();
  return rows[0].n as number;
}

/** The ids in each archive file of a site, downloaded as a member of the site would (one list per file). */
export async function archiveFileIds(platform: TestPlatform, apiUrl: string, siteId: string): Promise<number[][]> {
  const token = await platform.token({ sub: 'v', roles: ['VIEWER'], sites: [siteId] });
  const list = await call(apiUrl, 'GET', `/api/assets?siteId=${siteId}&folder=/archive`, { token });
  const files: number[][] = [];
  for (const asset of list.body.items) {
    const answer = await fetch(`${apiUrl}/api/assets/${asset.id}/download`, { headers: { authorization: `Bearer ${token}` } });
    files.push(csvIds(await answer.text()));
  }
  return files;
}

/** The global retention policy of a log type (30 days unless told), created through the API as an ADMIN's `token`. */
export async function globalRetention(apiUrl: string, token: string, logType: string, retentionDays = 30): Promise<void> {
  const created = await call(apiUrl, 'POST', '/api/settings/archive-policies', { token, body: { logType, siteId: null, retentionDays, enabled: true } });
  expect(created.status).toBe(201);
}
