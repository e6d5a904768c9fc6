import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { findTemporalCli } from '../../temporal-config/temporal-cli';
import { platformWithApi } from '../support/platform';
import { call, expectProblem } from '../support/http';
import { decodedPayloads, workflowShow } from '../support/observed';
import { recordHistory } from '../support/histories';
import { waitUntil } from '../support/wait';
import { rejectionOf } from '../support/failures';
import { publishedDefinition } from './harness';

/**
 * The approval gates hold for a caller who skips the API: a raw signal or Update sent straight to Temporal
 * (as the Web UI or the CLI sends them), an editor rewriting the chain that approves their work, and one
 * person deciding more than one stage.
 */

const thisFile = platformWithApi();
let admin: string;
let otherAdmin: string;
let editor: string;
let managerA: string;
let managerB: string;
const SITE = 'site-gates';

beforeAll(async () => {
  await thisFile.platform.startWorker(['approvals'], { API_INTERNAL_URL: thisFile.api.url });
  admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  otherAdmin = await thisFile.platform.token({ sub: 'abe', roles: ['ADMIN'] });
  editor = await thisFile.platform.token({ sub: 'eda', roles: ['EDITOR'], sites: [SITE] });
  managerA = await thisFile.platform.token({ sub: 'max', roles: ['MANAGER'], sites: [SITE] });
  managerB = await thisFile.platform.token({ sub: 'mia', roles: ['MANAGER'], sites: [SITE] });
});

const run = promisify(execFile);
/** The Temporal CLI against this test's namespace, as an operator (or an intruder) would use it. */
async function temporalCli(args: string[]): Promise<{ ok: boolean; output: string }> {
  const cli = findTemporalCli();
  if (!cli) throw new Error('the Temporal CLI is needed to send raw signals and updates');
  try {
    const { stdout, stderr } = await run(cli.path, [
      ...args,
      '--address',
      thisFile.platform.config.temporal.address,
      '--namespace',
      thisFile.platform.config.temporal.namespace,
    ]);
    return { ok: true, output: stdout + stderr };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

let pages = 0;
async function pendingPage(): Promise<{ id: string; correlationId: string; workflowId: string }> {
  const slug = `gate-${++pages}`;
  const created = await call(thisFile.api.url, 'POST', '/api/content/pages', { token: editor, body: { siteId: SITE, name: slug, slug, title: 't', data: {} } });
  expect(created.status).toBe(201);
  const submitted = await call(thisFile.api.url, 'POST', `/api/content/pages/${created.body.id}/publish`, { token: editor });
  expect(submitted.status).toBe(202);
  return { id: created.body.id, correlationId: submitted.body.correlationId, workflowId: submitted.body.workflowId };
}

const statusOf = async (id: string) => (await call(thisFile.api.url, 'GET', `/api/content/pages/${id}`, { token: editor })).body.status;
const approval = async (correlationId: string) => (await call(thisFile.api.url, 'GET', `/api/workflow/approvals/${correlationId}`, { token: managerA })).body;
const decide = (correlationId: string, token: string, decision = 'APPROVED') =>
  call(thisFile.api.url, 'POST', `/api/workflow/approvals/${correlationId}/decide`, { token, body: { decision } });

async function definition(stages: Array<{ name: string; role: string }>) {
  return publishedDefinition(thisFile.api.url, admin, { siteId: SITE, name: 'chain', stages });
}

let policyId: string;
beforeAll(async () => {
  const created = await call(thisFile.api.url, 'POST', '/api/workflow/approvals/policies', {
    token: admin,
    body: {
      componentType: 'PAGE',
      siteId: SITE,
      enabled: true,
      workflowDefinitionId: await definition([
        { name: 'Review', role: 'MANAGER' },
        { name: 'Sign-off', role: 'MANAGER' },
      ]),
    },
  });
  expect(created.status).toBe(201);
  policyId = created.body.id;
});

describe('decisions sent straight to Temporal', () => {
  test('a raw `decision` signal (temporal workflow signal) changes nothing; the run shows it refused; the decide endpoint still works', async () => {
    const page = await pendingPage();
    const signalled = await temporalCli([
      'workflow',
      'signal',
      '--workflow-id',
      page.workflowId,
      '--name',
      'decision',
      '--input',
      '{"stage":0,"decision":"APPROVED","decidedBy":"nobody"}',
    ]);
    expect(signalled.ok).toBe(true);
    const history = await waitUntil('the refusal in the history', async () => {
      const shown = workflowShow(thisFile.platform, page.workflowId);
      return (await decodedPayloads(thisFile.platform, shown)).includes('refuseRawDecision') ? shown : null;
    });
    expect(history).toContain('EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED');
    expect(await decodedPayloads(thisFile.platform, history)).toContain(
      'decisions reach a publish run only through POST /api/workflow/approvals/{correlationId}/decide',
    );
    expect(await statusOf(page.id)).toBe('PENDING_APPROVAL');
    expect(await approval(page.correlationId)).toEqual(expect.objectContaining({ status: 'PENDING', currentStage: 0, decisions: [] }));
    expect((await approval(page.correlationId)).progress).toEqual(expect.objectContaining({ stage: 'PENDING_APPROVAL', approvalStage: 0 }));

    expect((await decide(page.correlationId, managerA)).status).toBe(200);
    expect((await decide(page.correlationId, managerB)).status).toBe(200);
    await waitUntil('the page published', async () => ((await statusOf(page.id)) === 'PUBLISHED' ? true : null));
    await recordHistory(thisFile.platform.temporal, { workflowId: page.workflowId, name: 'publish-raw-signal-refused-then-approved' });
  });

  test('a raw `decide` Update naming no recorded decision fails with DECISION_NOT_RECORDED, in the history too, and changes nothing', async () => {
    const page = await pendingPage();
    const forged = await rejectionOf(
      thisFile.platform.temporal.client.workflow
        .getHandle(page.workflowId)
        .executeUpdate('decide', { args: [{ stage: 0, proposalId: randomUUID(), decision: 'APPROVED', decidedBy: 'max' }] }),
    );
    expect(forged).toBeInstanceOf(WorkflowUpdateFailedError);
    const failure = (forged as WorkflowUpdateFailedError).cause;
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).type).toBe('DECISION_NOT_RECORDED');
    expect((failure as ApplicationFailure).message).toContain('decide endpoint recorded no such decision');

    // The CLI, without the codec endpoint, sees the refusal's type; its message is sealed like a payload.
    const fromCli = await temporalCli([
      'workflow',
      'update',
      'execute',
      '--workflow-id',
      page.workflowId,
      '--name',
      'decide',
      '--input',
      `{"stage":0,"proposalId":"${randomUUID()}"}`,
    ]);
    expect(fromCli.ok).toBe(false);
    expect(fromCli.output).toContain('DECISION_NOT_RECORDED');
    const history = workflowShow(thisFile.platform, page.workflowId);
    // The publish's own `submitted` Update (Update-with-Start), then the two forged ones, refused.
    expect(history.match(/EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED/g)).toHaveLength(3);
    expect(history).toContain('DECISION_NOT_RECORDED');
    expect(history).not.toContain('decide endpoint recorded no such decision');

    expect(await statusOf(page.id)).toBe('PENDING_APPROVAL');
    expect(await approval(page.correlationId)).toEqual(expect.objectContaining({ status: 'PENDING', currentStage: 0, decisions: [] }));
  });

  test('a raw Update for another stage, or with no proposal, is rejected before it reaches the history', async () => {
    const page = await pendingPage();
    const handle = thisFile.platform.temporal.client.workflow.getHandle(page.workflowId);
    for (const args of [[{ stage: 1, proposalId: randomUUID() }], [{ stage: 0 }], [null]] as Array<[unknown]>) {
      const refused = await rejectionOf(handle.executeUpdate('decide', { args }));
      expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
    }
    const history = workflowShow(thisFile.platform, page.workflowId);
    // Only the publish's own `submitted` Update (Update-with-Start) was ever accepted.
    expect(history.match(/EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED/g)).toHaveLength(1);
    expect(await statusOf(page.id)).toBe('PENDING_APPROVAL');
  });

  test("replaying another approval's recorded decision (its proposal id) through a raw Update changes nothing", async () => {
    const decided = await pendingPage();
    expect((await decide(decided.correlationId, managerA)).status).toBe(200);
    const proposalId = (await thisFile.platform.db('workflow.approval_proposal').where({ correlation_id: decided.correlationId }).first('id')).id;
    const target = await pendingPage();
    const replayed = await rejectionOf(
      thisFile.platform.temporal.client.workflow.getHandle(target.workflowId).executeUpdate('decide', { args: [{ stage: 0, proposalId }] }),
    );
    expect(((replayed as WorkflowUpdateFailedError).cause as ApplicationFailure).type).toBe('DECISION_NOT_RECORDED');
    expect(await approval(target.correlationId)).toEqual(expect.objectContaining({ currentStage: 0, decisions: [] }));
  });
});

describe('four eyes', () => {
  test('one manager deciding both stages: 403 APPROVER_ALREADY_DECIDED on the second; another manager passes it', async () => {
    const page = await pendingPage();
    const first = await decide(page.correlationId, managerA);
    expect(first.status).toBe(200);
    expect(first.body).toEqual(
      expect.objectContaining({
        status: 'PENDING',
        currentStage: 1,
        workflowId: page.workflowId,
        runId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        uiUrl: expect.stringContaining('/history'),
      }),
    );
    expectProblem(await decide(page.correlationId, managerA), 403, 'APPROVER_ALREADY_DECIDED');
    expect(await approval(page.correlationId)).toEqual(expect.objectContaining({ status: 'PENDING', currentStage: 1 }));
    expect((await decide(page.correlationId, managerB)).body.status).toBe('APPROVED');
  });

  test('one ADMIN deciding both stages: 403 APPROVER_ALREADY_DECIDED on the second', async () => {
    const page = await pendingPage();
    expect((await decide(page.correlationId, admin)).status).toBe(200);
    expectProblem(await decide(page.correlationId, admin), 403, 'APPROVER_ALREADY_DECIDED');
    expect((await decide(page.correlationId, otherAdmin)).body.status).toBe('APPROVED');
  });

  test('the requester never decides, ADMIN included: 403 SELF_APPROVAL_FORBIDDEN', async () => {
    const created = await call(thisFile.api.url, 'POST', '/api/content/pages', {
      token: admin,
      body: { siteId: SITE, name: 'own', slug: 'own', title: 't', data: {} },
    });
    const submitted = await call(thisFile.api.url, 'POST', `/api/content/pages/${created.body.id}/publish`, { token: admin });
    expect(submitted.status).toBe(202);
    expectProblem(await decide(submitted.body.correlationId, admin), 403, 'SELF_APPROVAL_FORBIDDEN');
  });
});

describe('approval chains belong to administrators', () => {
  test('an EDITOR of the site cannot create, rewrite, publish, restore or delete a workflow definition: 403', async () => {
    const id = (await call(thisFile.api.url, 'GET', `/api/workflow/approvals/policies/${policyId}`, { token: admin })).body.workflowDefinitionId;
    const rewrite = { name: 'chain', stages: [{ name: 'Self-service', role: 'EDITOR' }] };
    expectProblem(await call(thisFile.api.url, 'POST', '/api/workflow/definitions', { token: editor, body: { siteId: SITE, ...rewrite } }), 403, 'FORBIDDEN');
    expectProblem(await call(thisFile.api.url, 'PUT', `/api/workflow/definitions/${id}`, { token: editor, body: rewrite }), 403, 'FORBIDDEN');
    expectProblem(await call(thisFile.api.url, 'POST', `/api/workflow/definitions/${id}/publish`, { token: editor }), 403, 'FORBIDDEN');
    const rev = (await call(thisFile.api.url, 'GET', `/api/workflow/definitions/${id}/history`, { token: editor })).body.items[0].rev;
    expectProblem(await call(thisFile.api.url, 'POST', `/api/workflow/definitions/${id}/restore/${rev}`, { token: editor }), 403, 'FORBIDDEN');
    expectProblem(await call(thisFile.api.url, 'POST', `/api/workflow/definitions/${id}/archive`, { token: editor }), 403, 'FORBIDDEN');
    expectProblem(await call(thisFile.api.url, 'DELETE', `/api/workflow/definitions/${id}`, { token: managerA }), 403, 'FORBIDDEN');
    const unchanged = (await call(thisFile.api.url, 'GET', `/api/workflow/definitions/${id}`, { token: editor })).body;
    expect(unchanged.stages).toEqual([
      { name: 'Review', role: 'MANAGER' },
      { name: 'Sign-off', role: 'MANAGER' },
    ]);
  });

  test('an EDITOR or MANAGER cannot create, replace or delete an approval policy: 403', async () => {
    const body = { componentType: 'PAGE', siteId: SITE, enabled: false };
    for (const token of [editor, managerA]) {
      expectProblem(
        await call(thisFile.api.url, 'POST', '/api/workflow/approvals/policies', { token, body: { ...body, componentType: 'PORTLET' } }),
        403,
        'FORBIDDEN',
      );
      expectProblem(await call(thisFile.api.url, 'PUT', `/api/workflow/approvals/policies/${policyId}`, { token, body }), 403, 'FORBIDDEN');
      expectProblem(await call(thisFile.api.url, 'DELETE', `/api/workflow/approvals/policies/${policyId}`, { token }), 403, 'FORBIDDEN');
    }
    expect((await call(thisFile.api.url, 'GET', `/api/workflow/approvals/policies/${policyId}`, { token: admin })).body.enabled).toBe(true);
  });
});
