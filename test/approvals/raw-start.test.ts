import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { PublishInput } from '../../domain/approvals';
import { platformWithApi } from '../support/platform';
import { call } from '../support/http';
import { startPeer } from '../messaging/harness';
import { waitUntil } from '../support/wait';
import { requireApproval } from './harness';
import { rejectionOf } from '../support/failures';

/**
 * A caller who skips the API: a publish run started on Temporal directly, its callback path pointing off
 * the API. The callback carries the internal token; it must go nowhere but the API itself.
 */

const thisFile = platformWithApi();
beforeAll(async () => {
  await thisFile.platform.startWorker(['approvals'], { API_INTERNAL_URL: thisFile.api.url });
});

/** A publish run started on Temporal directly, as a caller who skips the API would. */
const startRawPublish = (input: PublishInput) =>
  thisFile.platform.temporal.client.workflow.start('publishComponent', { taskQueue: 'approvals', workflowId: `raw-${randomUUID()}`, args: [input] });

test('a publish run started on Temporal directly with a callback path that leaves the API sends nothing there once approved, and fails saying why', async () => {
  const evil = await startPeer(() => ({ status: 200, body: '{}' }));
  try {
    const admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
    const manager = await thisFile.platform.token({ sub: 'maya', roles: ['MANAGER'], sites: ['site-1'] });
    // The callback is sent once the approval is decided: a policy makes the run wait for one.
    await requireApproval(thisFile.api.url, admin, { componentType: 'PAGE', siteId: 'site-1', enabled: true });
    const offHost = evil.url.replace(/^http:/, '');
    const hostile = [
      offHost + '/steal',
      offHost.replace(/\//g, '\\') + '/steal',
      `/\\${offHost.slice(2)}/steal`,
      `/api//${offHost.slice(2)}/steal`,
      '/api/../steal',
    ];
    for (const [n, callbackPath] of hostile.entries()) {
      const page = await call(thisFile.api.url, 'POST', '/api/content/pages', {
        token: admin,
        body: { siteId: 'site-1', name: `raw${n}`, slug: `raw${n}`, title: 't', data: {} },
      });
      expect(page.status).toBe(201);
      const revision = (await call(thisFile.api.url, 'GET', `/api/content/pages/${page.body.id}/history`, { token: admin })).body.items[0].rev as number;
      const input: PublishInput = {
        componentType: 'PAGE',
        siteId: 'site-1',
        resourceId: page.body.id,
        revision,
        callbackPath,
        requestedBy: 'mallory',
        title: null,
        comment: null,
        correlationId: null,
      };
      const handle = await startRawPublish(input);
      // The run refuses the path at its start now (its input check); should one get past, it waits for its
      // approval, and the callback activity refuses the path once it is approved.
      const outcome = rejectionOf(handle.result());
      const correlationId = await waitUntil('the run to fail or to wait for its approval', async () => {
        if (await Promise.race([outcome.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 50))])) return 'failed';
        // A run that failed at once never registered its query.
        const progress = (await handle.query('progress').catch(() => null)) as { stage: string; correlationId: string | null } | null;
        return progress?.stage === 'PENDING_APPROVAL' ? progress.correlationId : null;
      });
      if (correlationId !== 'failed')
        expect(
          (await call(thisFile.api.url, 'POST', `/api/workflow/approvals/${correlationId}/decide`, { token: manager, body: { decision: 'APPROVED' } })).status,
        ).toBe(200);
      const failure = await outcome;
      expect({ callbackPath, failed: failure instanceof WorkflowFailedError }).toEqual({ callbackPath, failed: true });
      let cause: unknown = (failure as WorkflowFailedError).cause;
      while (cause && !(cause instanceof ApplicationFailure)) cause = (cause as { cause?: unknown }).cause;
      expect({ callbackPath, type: (cause as ApplicationFailure | undefined)?.type }).toEqual({ callbackPath, type: 'VALIDATION_FAILED' });
    }
    expect(evil.received).toEqual([]);
  } finally {
    await evil.close();
  }
});

test('the approval callback publishes only what its approval approved: another revision, another page, an undecided or unknown approval are refused and publish nothing', async () => {
  const admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  const editor = await thisFile.platform.token({ sub: 'eda', roles: ['EDITOR'], sites: ['site-cb'] });
  const manager = await thisFile.platform.token({ sub: 'max', roles: ['MANAGER'], sites: ['site-cb'] });
  await requireApproval(thisFile.api.url, admin, { componentType: 'PAGE', siteId: 'site-cb', enabled: true });
  const internal = { authorization: `Bearer ${thisFile.platform.config.secrets.internalToken}` };
  const newPage = async (slug: string) => {
    const page = await call(thisFile.api.url, 'POST', '/api/content/pages', {
      token: editor,
      body: { siteId: 'site-cb', name: slug, slug, title: 't', data: {} },
    });
    expect(page.status).toBe(201);
    return page.body.id as string;
  };
  const submit = async (id: string) => {
    const submitted = await call(thisFile.api.url, 'POST', `/api/content/pages/${id}/publish`, { token: editor });
    expect(submitted.body.status).toBe('PENDING_APPROVAL');
    return submitted.body as { correlationId: string; workflowId: string };
  };
  const revisionOf = async (id: string) =>
    (await call(thisFile.api.url, 'GET', `/api/content/pages/${id}/history`, { token: editor })).body.items[0].rev as number;
  const callback = (id: string, body: Record<string, unknown>) =>
    call(thisFile.api.url, 'POST', `/api/content/pages/${id}/approval-callback`, { headers: internal, body });
  const statusOf = async (id: string) => (await call(thisFile.api.url, 'GET', `/api/content/pages/${id}`, { token: editor })).body.status as string;

  // Approved: page A at its submitted revision. Then A gets a newer draft.
  const a = await newPage('cb-a');
  const approvedRevision = await revisionOf(a);
  const approvedRun = await submit(a);
  expect(
    (await call(thisFile.api.url, 'POST', `/api/workflow/approvals/${approvedRun.correlationId}/decide`, { token: manager, body: { decision: 'APPROVED' } }))
      .status,
  ).toBe(200);
  await thisFile.platform.temporal.client.workflow.getHandle(approvedRun.workflowId).result();
  expect(
    (await call(thisFile.api.url, 'PUT', `/api/content/pages/${a}`, { token: editor, body: { name: 'cb-a', slug: 'cb-a', title: 'newer', data: {} } })).status,
  ).toBe(200);
  const newerRevision = await revisionOf(a);
  expect(newerRevision).toBeGreaterThan(approvedRevision);
  // Pending: page B, not decided yet.
  const b = await newPage('cb-b');
  const pending = await submit(b);

  for (const [what, id, body] of [
    ["a newer revision than the approval's", a, { decision: 'APPROVED', revision: newerRevision, correlationId: approvedRun.correlationId }],
    ["another page, with page A's approval", b, { decision: 'APPROVED', revision: await revisionOf(b), correlationId: approvedRun.correlationId }],
    ['an approval still pending', b, { decision: 'APPROVED', revision: await revisionOf(b), correlationId: pending.correlationId }],
    ['no approval at all', b, { decision: 'APPROVED', revision: await revisionOf(b), correlationId: randomUUID() }],
  ] as Array<[string, string, Record<string, unknown>]>) {
    const refused = await callback(id, body);
    expect({ what, status: refused.status, code: refused.body?.code }).toEqual({ what, status: 409, code: 'APPROVAL_MISMATCH' });
  }
  // The spent approval of A, sent again once A was archived: it brings nothing back.
  expect((await call(thisFile.api.url, 'POST', `/api/content/pages/${a}/archive`, { token: editor })).status).toBe(200);
  const replayed = await callback(a, { decision: 'APPROVED', revision: approvedRevision, correlationId: approvedRun.correlationId });
  expect({ status: replayed.status, code: replayed.body?.code }).toEqual({ status: 409, code: 'APPROVAL_MISMATCH' });
  expect(await statusOf(a)).toBe('ARCHIVED');
  const history = (await call(thisFile.api.url, 'GET', `/api/content/pages/${a}/history`, { token: editor })).body.items as Array<{
    rev: number;
    status: string;
  }>;
  expect(history.find((entry) => entry.rev === newerRevision)?.status).not.toBe('PUBLISHED');
  expect(await statusOf(b)).toBe('PENDING_APPROVAL');
});

test("a raw publish run that names another site (one without a policy) for a page of a site with one is refused: the page's own site decides", async () => {
  const admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  await requireApproval(thisFile.api.url, admin, { componentType: 'PAGE', siteId: 'site-guarded', enabled: true });
  const page = await call(thisFile.api.url, 'POST', '/api/content/pages', {
    token: admin,
    body: { siteId: 'site-guarded', name: 'guarded', slug: 'guarded', title: 't', data: {} },
  });
  expect(page.status).toBe(201);
  const revision = (await call(thisFile.api.url, 'GET', `/api/content/pages/${page.body.id}/history`, { token: admin })).body.items[0].rev as number;
  for (const [siteId, rev] of [
    ['site-open', revision],
    ['site-guarded', revision + 5],
  ] as Array<[string, number]>) {
    const input: PublishInput = {
      componentType: 'PAGE',
      siteId,
      resourceId: page.body.id,
      revision: rev,
      callbackPath: `/api/content/pages/${page.body.id}/approval-callback`,
      requestedBy: 'mallory',
      title: null,
      comment: null,
      correlationId: null,
    };
    const handle = await startRawPublish(input);
    const failure = await rejectionOf(handle.result());
    expect({ siteId, rev, failed: failure instanceof WorkflowFailedError }).toEqual({ siteId, rev, failed: true });
  }
  expect((await call(thisFile.api.url, 'GET', `/api/content/pages/${page.body.id}`, { token: admin })).body.status).toBe('DRAFT');
});

test('a raw publish run of a release that names another site, or a version its items have left, is refused and publishes none of them', async () => {
  const admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  await requireApproval(thisFile.api.url, admin, { componentType: 'PAGE', siteId: 'site-guarded-r', enabled: true });
  const page = await call(thisFile.api.url, 'POST', '/api/content/pages', {
    token: admin,
    body: { siteId: 'site-guarded-r', name: 'in-release', slug: 'in-release', title: 't', data: {} },
  });
  const release = await call(thisFile.api.url, 'POST', '/api/content/releases', { token: admin, body: { name: 'raw', siteId: 'site-guarded-r' } });
  const added = await call(thisFile.api.url, 'POST', `/api/content/releases/${release.body.id}/items`, {
    token: admin,
    body: { type: 'PAGE', id: page.body.id },
  });
  expect(added.status).toBe(201);
  const version = added.body.version as number;
  for (const [siteId, revision] of [
    ['site-open', version],
    ['site-guarded-r', version - 1],
  ] as Array<[string, number]>) {
    const input: PublishInput = {
      componentType: 'RELEASE',
      siteId,
      resourceId: release.body.id,
      revision,
      callbackPath: `/api/content/releases/${release.body.id}/approval-callback`,
      requestedBy: 'mallory',
      title: null,
      comment: null,
      correlationId: null,
    };
    const failure = await rejectionOf((await startRawPublish(input)).result());
    expect({ siteId, revision, failed: failure instanceof WorkflowFailedError }).toEqual({ siteId, revision, failed: true });
  }
  expect((await call(thisFile.api.url, 'GET', `/api/content/releases/${release.body.id}`, { token: admin })).body.status).toBe('OPEN');
  expect((await call(thisFile.api.url, 'GET', `/api/content/pages/${page.body.id}`, { token: admin })).body.status).toBe('DRAFT');
});

test('a raw run cannot reopen a published release, nor archive a release at a time', async () => {
  const admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  const page = await call(thisFile.api.url, 'POST', '/api/content/pages', {
    token: admin,
    body: { siteId: 'site-reopen', name: 'p', slug: 'p', title: 't', data: {} },
  });
  const release = await call(thisFile.api.url, 'POST', '/api/content/releases', { token: admin, body: { name: 'done', siteId: 'site-reopen' } });
  const added = await call(thisFile.api.url, 'POST', `/api/content/releases/${release.body.id}/items`, {
    token: admin,
    body: { type: 'PAGE', id: page.body.id },
  });
  expect((await call(thisFile.api.url, 'POST', `/api/content/releases/${release.body.id}/publish`, { token: admin, body: {} })).status).toBe(200);
  // Pages of the site need approval from now on: a run that got past the check would wait in the queue, the release reopened.
  await requireApproval(thisFile.api.url, admin, { componentType: 'PAGE', siteId: 'site-reopen', enabled: true });
  const base: PublishInput = {
    componentType: 'RELEASE',
    siteId: 'site-reopen',
    resourceId: release.body.id,
    revision: added.body.version,
    callbackPath: `/api/content/releases/${release.body.id}/approval-callback`,
    requestedBy: 'mallory',
    title: null,
    comment: null,
    correlationId: null,
  };
  for (const input of [base, { ...base, action: 'ARCHIVE' as const, dueAt: new Date(Date.now() + 60_000).toISOString() }]) {
    const failure = await rejectionOf((await startRawPublish(input)).result());
    expect({ action: input.action ?? 'PUBLISH', failed: failure instanceof WorkflowFailedError }).toEqual({ action: input.action ?? 'PUBLISH', failed: true });
  }
  expect((await call(thisFile.api.url, 'GET', `/api/content/releases/${release.body.id}`, { token: admin })).body.status).toBe('PUBLISHED');
  const scheduled = (await call(thisFile.api.url, 'GET', '/api/workflow/scheduled?siteId=site-reopen', { token: admin })).body.items;
  expect(scheduled).toEqual([]);
});
