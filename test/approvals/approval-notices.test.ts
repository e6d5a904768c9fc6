import { platformWithApi } from '../support/platform';
import { call } from '../support/http';
import { waitUntil } from '../support/wait';
import { recordHistory } from '../support/histories';
import { CapturedMail, mailTo, smtpChannel } from '../messaging/harness';
import { pagesNeedApproval } from './harness';
import { fairShareOfRun } from '../support/fair-share';
import { PRIORITY } from '../../domain/fairness';

const thisFile = platformWithApi();
const SITE = 'site-notice';
// Addresses unique to this file: the mail capture server is shared by the whole run.
const address = (local: string) => `${local}@notice-test.example`;

let mailApi: string;
const tokens: Record<string, string> = {};

async function directoryUser(local: string, values: { name: string; locale: 'en' | 'ar'; roles: string[]; site?: string }): Promise<string> {
  const site = values.site ?? SITE;
  const [row] = await thisFile.platform
    .db('directory.user')
    .insert({ email: address(local), name: values.name, locale: values.locale, roles: values.roles, site_ids: [site] })
    .returning('id');
  tokens[local] = await thisFile.platform.token({ sub: row.id, name: values.name, roles: values.roles, sites: [site] });
  return row.id;
}

beforeAll(async () => {
  await thisFile.platform.startWorker(['approvals', 'messaging'], { API_INTERNAL_URL: thisFile.api.url });
  mailApi = thisFile.platform.info.mail.apiUrl;
  await directoryUser('layla', { name: 'Layla Manager', locale: 'ar', roles: ['MANAGER'] });
  await directoryUser('mark', { name: 'Mark Manager', locale: 'en', roles: ['MANAGER'] });
  await directoryUser('ada', { name: 'Ada Admin', locale: 'en', roles: ['ADMIN'] });
  await directoryUser('eda', { name: 'Eda Editor', locale: 'en', roles: ['EDITOR', 'MANAGER'] });
  const admin = tokens.ada;
  await smtpChannel(thisFile.api.url, admin, 'capture', thisFile.platform.info.mail.smtpPort);
  await pagesNeedApproval(thisFile.api.url, admin, {
    siteId: SITE,
    name: 'review with escalation',
    stages: [{ name: 'Review', role: 'MANAGER', remindAfter: 'PT1S', escalateAfter: 'PT3S' }],
  });
});

async function submitPage(title: string) {
  const created = await call(thisFile.api.url, 'POST', '/api/content/pages', {
    token: tokens.eda,
    body: { siteId: SITE, name: title, slug: title, title, data: { n: 1 } },
  });
  expect(created.status).toBe(201);
  const submitted = await call(thisFile.api.url, 'POST', `/api/content/pages/${created.body.id}/publish`, { token: tokens.eda, body: {} });
  expect(submitted.status).toBe(202);
  return { id: created.body.id as string, correlationId: submitted.body.correlationId as string, workflowId: submitted.body.workflowId as string };
}

/** `token`'s decision on the page's approval, which the API takes. */
async function decide(page: { correlationId: string }, token: string, decision: 'APPROVED' | 'REJECTED'): Promise<void> {
  const decided = await call(thisFile.api.url, 'POST', `/api/workflow/approvals/${page.correlationId}/decide`, { token, body: { decision } });
  expect(decided.status).toBe(200);
}

/** The mails a user got whose subject is (or, for a title, contains) the text. */
const mailsAbout = async (local: string, title: string): Promise<CapturedMail[]> =>
  (await mailTo(mailApi, address(local))).filter((mail) => mail.subject.includes(title));
const arrives = (local: string, title: string, count = 1) =>
  waitUntil(
    `${count} mail(s) about ${title} for ${local}`,
    async () => {
      const mails = await mailsAbout(local, title);
      return mails.length >= count ? mails : null;
    },
    30000,
  );

test('reaching a stage emails its role holders in the site, each in their own locale, with what changes and a link; the requester is not asked', async () => {
  const { correlationId } = await submitPage('notice-one');
  const [arabic] = await arrives('layla', 'مطلوب اعتماد: notice-one');
  expect(arabic.html).toContain('dir="rtl"');
  expect(arabic.html).toContain('Eda Editor');
  expect(arabic.html).toContain(`/api/workflow/approvals/${correlationId}`);
  const [english] = await arrives('mark', 'Approval needed: notice-one');
  expect(english.html).toContain('first publish');
  expect(english.html).toContain('/title');
  // Eda is a MANAGER of the site too, but never decides her own request: she is not asked.
  expect(await mailsAbout('eda', 'Approval needed: notice-one')).toEqual([]);
});

test("a notice's run carries its publish's urgent priority and its site's fairness key, inherited (decision 046)", async () => {
  const page = await submitPage('notice-fair');
  await arrives('mark', 'Approval needed: notice-fair');
  const { temporal } = thisFile.platform;
  expect(await fairShareOfRun(temporal, page.workflowId)).toEqual({ priorityKey: PRIORITY.urgent, fairnessKey: SITE });
  const history = await temporal.client.workflow.getHandle(page.workflowId).fetchHistory();
  const notice = history.events?.find((event) => event.childWorkflowExecutionStartedEventAttributes)?.childWorkflowExecutionStartedEventAttributes;
  expect(notice?.workflowExecution?.workflowId).toMatch(/^email-role:/);
  // Started with no priority of its own: the notice's run carries its parent's.
  expect(await fairShareOfRun(temporal, notice!.workflowExecution!.workflowId!)).toEqual({ priorityKey: PRIORITY.urgent, fairnessKey: SITE });
  await decide(page, tokens.mark, 'REJECTED');
});

test('without a decision, a 1-second remindAfter reminds the role holders, a 3-second escalateAfter emails the site ADMINs; the decision then emails the requester the outcome', async () => {
  const page = await submitPage('notice-late');
  const [reminder] = await arrives('mark', 'Reminder: approval needed: notice-late');
  expect(reminder.html).toContain('still waits for your decision');
  expect(await arrives('layla', 'تذكير: مطلوب اعتماد: notice-late')).toHaveLength(1);
  const [escalation] = await arrives('ada', 'notice-late');
  expect(escalation.subject).toBe('Approval overdue: notice-late');
  expect(escalation.html).toContain('Review');

  await decide(page, tokens.mark, 'APPROVED');
  const [outcome] = await arrives('eda', 'notice-late');
  expect(outcome.subject).toBe('notice-late: approved and published');
  await recordHistory(thisFile.platform.temporal, { workflowId: page.workflowId, name: 'publish-escalated-then-approved' });
});

test('a decision before escalateAfter cancels the timer: no escalation is sent', async () => {
  const page = await submitPage('notice-prompt');
  await arrives('mark', 'notice-prompt');
  await decide(page, tokens.layla, 'REJECTED');
  const [outcome] = await arrives('eda', 'notice-prompt');
  expect(outcome.subject).toBe('notice-prompt: rejected');
  // Past the escalation's time, and the run is over: nothing went to the ADMIN.
  await new Promise((resolve) => setTimeout(resolve, 4000));
  expect(await mailsAbout('ada', 'notice-prompt')).toEqual([]);
  const history = await thisFile.platform.temporal.client.workflow.getHandle(page.workflowId).fetchHistory();
  expect(history.events!.some((event) => event.timerFiredEventAttributes)).toBe(false);
  expect(history.events!.some((event) => event.timerCanceledEventAttributes)).toBe(true);
});

test('a stage that names its users: only they are asked and only they decide it, though neither the role nor ADMIN; the requester named is still refused', async () => {
  const site = 'site-named';
  const nora = await directoryUser('nora', { name: 'Nora Editor', locale: 'en', roles: ['EDITOR'], site });
  const rita = await directoryUser('rita', { name: 'Rita Requester', locale: 'en', roles: ['EDITOR'], site });
  await directoryUser('omar', { name: 'Omar Manager', locale: 'en', roles: ['MANAGER'], site });
  await pagesNeedApproval(thisFile.api.url, tokens.ada, {
    siteId: site,
    name: 'legal names its readers',
    stages: [{ name: 'Legal', role: 'MANAGER', assignees: [nora, rita] }],
  });
  const since = new Date();
  const created = await call(thisFile.api.url, 'POST', '/api/content/pages', {
    token: tokens.rita,
    body: { siteId: site, name: 'named-one', slug: 'named-one', title: 'named-one', data: { n: 1 } },
  });
  expect(created.status).toBe(201);
  const submitted = await call(thisFile.api.url, 'POST', `/api/content/pages/${created.body.id}/publish`, { token: tokens.rita, body: {} });
  expect(submitted.status).toBe(202);
  const page = { correlationId: submitted.body.correlationId as string };

  // Asked: the named user, not the requester although named, not the site's MANAGER.
  await arrives('nora', 'Approval needed: named-one');
  const asked = await thisFile.platform
    .db('email.email_log')
    .where({ requested_by: 'platform:approvals' })
    .where('created_at', '>=', since)
    .whereIn('recipient', ['nora', 'rita', 'omar', 'ada'].map(address))
    .pluck('recipient');
  expect(asked).toEqual([address('nora')]);

  const attempt = (token: string) =>
    call(thisFile.api.url, 'POST', `/api/workflow/approvals/${page.correlationId}/decide`, { token, body: { decision: 'APPROVED' } });
  for (const outsider of [tokens.omar, tokens.ada]) {
    const refused = await attempt(outsider);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual(expect.objectContaining({ code: 'FORBIDDEN', detail: 'Stage "Legal" is decided by the users it names.' }));
  }
  expect((await attempt(tokens.rita)).body.code).toBe('SELF_APPROVAL_FORBIDDEN');
  const approved = await attempt(tokens.nora);
  expect(approved.status).toBe(200);
  expect(approved.body).toEqual(expect.objectContaining({ status: 'APPROVED', decisions: [expect.objectContaining({ decidedBy: nora, stage: 0 })] }));
});

test('#58, finding 1: a publish scheduled while its site asked for no approval, then a policy enabled: at its time it waits for approval, its requester is told, and it publishes once approved', async () => {
  const site = 'site-held';
  await directoryUser('hana', { name: 'Hana Editor', locale: 'en', roles: ['EDITOR'], site });
  await directoryUser('hamid', { name: 'Hamid Manager', locale: 'en', roles: ['MANAGER'], site });
  const created = await call(thisFile.api.url, 'POST', '/api/content/pages', {
    token: tokens.hana,
    body: { siteId: site, name: 'held-later', slug: 'held-later', title: 'held-later', data: { n: 1 } },
  });
  expect(created.status).toBe(201);
  const dueAt = new Date(Date.now() + 6000).toISOString();
  const scheduled = await call(thisFile.api.url, 'POST', `/api/content/pages/${created.body.id}/publish`, { token: tokens.hana, body: { publishAt: dueAt } });
  expect(scheduled.body).toEqual(expect.objectContaining({ status: 'SCHEDULED', dueAt }));
  await pagesNeedApproval(thisFile.api.url, tokens.ada, { siteId: site, name: 'enabled later', stages: [{ name: 'Review', role: 'MANAGER' }] });

  const [held] = await arrives('hana', 'held-later: waiting for approval');
  expect(held.html).toContain('now asks for approval first');
  const [asked] = await arrives('hamid', 'Approval needed: held-later');
  const correlationId = /\/api\/workflow\/approvals\/([0-9a-f-]{36})/.exec(asked.html)![1];
  const page = async () => (await call(thisFile.api.url, 'GET', `/api/content/pages/${created.body.id}`, { token: tokens.hana })).body;
  // Asked again up to two seconds early, as the run wakes early for its change; past its time, still not published.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(dueAt) + 1000 - Date.now())));
  expect(await page()).toEqual(expect.objectContaining({ status: 'PENDING_APPROVAL' }));
  // Its schedule is over: from now on an approval request, listed as such and no longer as scheduled.
  expect(await thisFile.platform.db('workflow.scheduled_change').where({ run_id: scheduled.body.runId }).first()).toEqual(
    expect.objectContaining({ status: 'HELD' }),
  );

  await decide({ correlationId }, tokens.hamid, 'APPROVED');
  const [outcome] = await arrives('hana', 'held-later: approved and published');
  expect(outcome).toBeDefined();
  expect(await page()).toEqual(expect.objectContaining({ status: 'PUBLISHED' }));
  await recordHistory(thisFile.platform.temporal, { workflowId: scheduled.body.workflowId, name: 'publish-held-for-approval-at-its-time' });
});
