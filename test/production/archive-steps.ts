import { call } from '../support/http';
import { waitUntil } from '../support/wait';
import type { ComposeStack } from './stack';
import { download, sha256 } from './steps';

/**
 * The archive's part of the drills: email-log rows old enough to archive, a run of one site to the S3 store,
 * its files read back, and a restore. Only the seeding of old rows goes past the edge: the platform makes
 * no row older than now, so the drill writes them as a long-running site would have, with psql.
 */
export async function seedOldEmailLogs(stack: ComposeStack, site: string, rows: number): Promise<void> {
  const sql = `
    select settings.ensure_log_partitions('email.email_log'::regclass, date_trunc('month', now() - interval '61 days' - ${rows} * interval '1 second')::date, date_trunc('month', now())::date);
    insert into email.email_log (site_id, created_at, updated_at, recipient, status, attempts, subject)
    select '${site}', now() - interval '60 days' - g * interval '1 second', now() - interval '60 days', 'old' || g || '@drill.example', 'SUCCESS', 1, 'old ' || g
    from generate_series(1, ${rows}) g;`;
  await stack.compose(['exec', '-T', 'postgres', 'psql', '-v', 'ON_ERROR_STOP=1', '-U', 'opsflow', '-d', 'opsflow', '-c', sql]);
}

/** Gives the API the store's keys and archives `site`'s email logs older than 30 days now; answers the run's site entry. */
export async function archiveSite(stack: ComposeStack, adminToken: string, site: string) {
  const keys = await call(stack.baseUrl, 'PUT', '/api/settings/archive-sink/credentials', {
    token: adminToken,
    body: { accessKeyId: stack.s3.accessKeyId, secretAccessKey: stack.s3.secretAccessKey },
  });
  expect(keys.status).toBe(200);
  expect(keys.text).not.toContain(stack.s3.secretAccessKey);
  const policy = await call(stack.baseUrl, 'POST', '/api/settings/archive-policies', {
    token: adminToken,
    body: { logType: 'EMAIL_LOG', siteId: site, retentionDays: 30, enabled: true },
  });
  expect([201, 409]).toContain(policy.status);
  const started = await waitUntil(
    'the archive run to start',
    async () => {
      const answer = await call(stack.baseUrl, 'POST', '/api/settings/archive-policies/run', {
        token: adminToken,
        body: { logType: 'EMAIL_LOG', siteId: site },
      });
      if (answer.status === 409) return null;
      expect(answer.status).toBe(202);
      return answer.body;
    },
    { timeoutMs: 120000, intervalMs: 1000 },
  );
  expect(started.runs).toHaveLength(1);
  return archiveRunEnd(stack, adminToken, site);
}

export async function archiveRunEnd(stack: ComposeStack, adminToken: string, site: string, timeoutMs = 300000) {
  const run = await waitUntil(
    'the archive run to end',
    async () => {
      const answer = await call(stack.baseUrl, 'GET', '/api/settings/archive-runs/archive:EMAIL_LOG', { token: adminToken });
      return answer.status === 200 && ['COMPLETED', 'FAILED'].includes(answer.body.status) ? answer.body : null;
    },
    { timeoutMs, intervalMs: 1000 },
  );
  const entry = (run.sites as Array<{ siteId: string; state: string; error: string | null; rowsExported: number; rowsDeleted: number }>).find(
    (each) => each.siteId === site,
  );
  expect({ status: run.status, site: entry?.state, error: entry?.error ?? null }).toEqual({ status: 'COMPLETED', site: 'DONE', error: null });
  return entry!;
}

/** The site's archive files, each downloaded through the edge and checked against its recorded checksum. */
export async function archiveFiles(stack: ComposeStack, token: string, site: string) {
  const listed = await call(stack.baseUrl, 'GET', `/api/assets?siteId=${site}&folder=/archive`, { token });
  expect(listed.status).toBe(200);
  const files: Array<{ id: string; name: string; sha256: string; bytes: Buffer }> = [];
  for (const item of listed.body.items as Array<{ id: string; name: string; sha256: string }>) {
    const bytes = await download(stack, token, item.id);
    expect({ name: item.name, sha256: sha256(bytes) }).toEqual({ name: item.name, sha256: item.sha256 });
    files.push({ ...item, bytes });
  }
  return files;
}

/** Restores one archive file into the log table; answers the restore's counts. */
export async function restoreFile(stack: ComposeStack, adminToken: string, assetId: string) {
  const started = await call(stack.baseUrl, 'POST', '/api/settings/archive-restores', { token: adminToken, body: { assetId } });
  expect({ status: started.status, body: started.status === 202 ? null : started.body }).toEqual({ status: 202, body: null });
  return waitUntil(
    'the restore to end',
    async () => {
      const answer = await call(stack.baseUrl, 'GET', `/api/settings/archive-restores/${started.body.workflowId}`, { token: adminToken });
      return answer.status === 200 && answer.body.status !== 'RUNNING' ? answer.body : null;
    },
    { timeoutMs: 120000, intervalMs: 500 },
  );
}
