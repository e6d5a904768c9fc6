import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { PublishInput } from '../../domain/approvals';
import { attachPlatform, RunningApi, TestPlatform } from '../support/platform';
import { call } from '../support/http';
import { startPeer } from '../messaging/harness';
import { waitUntil } from '../support/wait';

/**
 * A caller who skips the API: a publish run started on Temporal directly, its callback path pointing off
 * the API. The callback carries the internal token; it must go nowhere but the API itself.
 */
let platform: TestPlatform;
let api: RunningApi;

beforeAll(async () => {
  platform = await attachPlatform();
  api = await platform.startApi();
  await platform.startWorker(['approvals']);
});

afterAll(async () => {
  await platform?.close();
});

test('a publish run started on Temporal directly with a callback path that leaves the API sends nothing there once approved, and fails saying why', async () => {
  const evil = await startPeer(() => ({ status: 200, body: '{}' }));
  try {
    const admin = await platform.token({ sub: 'ada', roles: ['ADMIN'] });
    const manager = await platform.token({ sub: 'maya', roles: ['MANAGER'], sites: ['site-1'] });
    // The callback is sent once the approval is decided: a policy makes the run wait for one.
    expect((await call(api.url, 'POST', '/api/workflow/approvals/policies', { token: admin, body: { componentType: 'PAGE', siteId: 'site-1', enabled: true } })).status).toBe(201);
    const offHost = evil.url.replace(/^http:/, '');
    const hostile = [offHost + '/steal', offHost.replace(/\//g, '\\') + '/steal', `/\\${offHost.slice(2)}/steal`, `/api//${offHost.slice(2)}/steal`, '/api/../steal'];
    for (const [n, callbackPath] of hostile.entries()) {
      const page = await call(api.url, 'POST', '/api/content/pages', { token: admin, body: { siteId: 'site-1', name: `raw${n}`, slug: `raw${n}`, title: 't', data: {} } });
      expect(page.status).toBe(201);
      const revision = (await call(api.url, 'GET', `/api/content/pages/${page.body.id}/history`, { token: admin })).body.items[0].rev as number;
      const input: PublishInput = { componentType: 'PAGE', siteId: 'site-1', resourceId: page.body.id, revision, callbackPath, requestedBy: 'mallory', title: null, comment: null, correlationId: null };
      const handle = await platform.temporal.client.workflow.start('publishComponent', { taskQueue: 'approvals', workflowId: `raw-${randomUUID()}`, args: [input] });
      const correlationId = await waitUntil('the run to wait for its approval', async () => {
        const progress = (await handle.query('progress')) as { stage: string; correlationId: string | null };
        return progress.stage === 'PENDING_APPROVAL' ? progress.correlationId : null;
      });
      expect((await call(api.url, 'POST', `/api/workflow/approvals/${correlationId}/decide`, { token: manager, body: { decision: 'APPROVED' } })).status).toBe(200);
      const failure = await handle.result().then(() => null, (error: unknown) => error);
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
