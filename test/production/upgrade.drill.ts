import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../../scripts/platform/children';
import { deploymentOutcome, steadyTraffic } from '../deploy/harness';
import { requireApproval } from '../approvals/harness';
import { call } from '../support/http';
import { waitUntil } from '../support/wait';
import { archiveFiles, archiveRunEnd, seedOldEmailLogs } from './archive-steps';
import { buildImages, type ComposeStack, composeStack, endDrill } from './stack';
import { addPeople, approve, askToPublish, batchDone, deployHello, mailCountByRecipient, publishedPage, sendToRole, signIn, type Tokens } from './steps';

/**
 * Drill 3, upgrade: the stack runs an earlier release (UPGRADE_FROM), with work in flight: an
 * approval waiting, a 2,000-recipient role send half done, an archive run mid-export, a service serving under
 * steady traffic. It is upgraded to this tree the way docs/production.md says. Nothing is lost or done twice,
 * and the requests that failed during the upgrade are counted and printed.
 */
/**
 * The release before this work (the last that landed): its own compose file and images, as its operators
 * run them. Its Temporal nodes run the default claim mapper, one signing key for everything; this tree's run
 * our own, with the administrator's key apart (#58, findings 5 and 6).
 */
const UPGRADE_FROM = process.env.OPSFLOW_UPGRADE_FROM ?? 'd664534';
const SITE = 'drill-site';
const RECIPIENTS = 2000;
const ARCHIVED_ROWS = 800000;
let stack: ComposeStack;
let tokens: Tokens;
/** Where the old release's tree is unpacked. */
const release = () => path.join(stack.dir, 'release');

/** The old release's tree, and its images built by its own compose file (the platform's, its Temporal server's). */
async function buildRelease(commit: string, into: string): Promise<void> {
  try {
    execFileSync('git', ['-C', PROJECT_ROOT, 'cat-file', '-e', `${commit}^{commit}`], { stdio: 'ignore' });
  } catch {
    throw new Error(`The upgrade drill starts from ${commit}, which this clone's history lacks (a shallow clone?): fetch it, or set OPSFLOW_UPGRADE_FROM.`);
  }
  fs.mkdirSync(into, { recursive: true });
  execFileSync('bash', ['-c', `git -C "$0" archive "$1" | tar -x -C "$2"`, PROJECT_ROOT, commit, into]);
  await stack.compose(['build'], { version: commit, release: into });
}

beforeAll(async () => {
  stack = await composeStack(fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-upgrade-drill-')), { s3Sink: false });
  await buildImages(stack);
  const started = Date.now();
  await buildRelease(UPGRADE_FROM, release());
  console.log(`upgrade drill: the images of ${UPGRADE_FROM} built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  await stack.removeDeployedServices();
  await stack.down({ volumes: true });
  await stack.up({ version: UPGRADE_FROM, release: release() });
  tokens = await signIn(stack, SITE);
}, 2400000);

afterAll(() => endDrill(stack), 300000);

/** Adds the recipients ten at a time. */
async function manyPeople(count: number): Promise<string[]> {
  const addresses: string[] = [];
  for (let start = 0; start < count; start += 10) {
    const batch = await Promise.all(
      Array.from({ length: 10 }, (_, index) => addPeople(stack, tokens.admin, { site: SITE, role: 'EDITOR', count: 1, tag: `upgrade-${start + index}` })),
    );
    addresses.push(...batch.flat());
  }
  return addresses;
}

test('an upgrade with work in flight loses nothing and does nothing twice, and the service serves throughout', async () => {
  const deployed = await deployHello(stack, tokens.admin, { name: 'drill-service', version: '1' });
  expect(await deploymentOutcome(stack.baseUrl, tokens.admin, deployed.deploymentId, 300000)).toMatchObject({ status: 'RUNNING' });
  await requireApproval(stack.baseUrl, tokens.admin, { componentType: 'PAGE', siteId: SITE, enabled: true });
  const waiting = await askToPublish(stack, tokens, SITE, 'waiting-page');
  // A send slow enough to be half done when the upgrade starts: 25 messages a second.
  const channel = await call(stack.baseUrl, 'POST', '/api/settings/email', {
    token: tokens.admin,
    body: { configName: 'mailpit', transport: 'SMTP', smtpHost: 'mailpit', smtpPort: 1025, isActive: true, ratePerSecond: 25 },
  });
  expect(channel.status).toBe(201);
  const recipients = await manyPeople(RECIPIENTS);
  await seedOldEmailLogs(stack, SITE, ARCHIVED_ROWS);
  const archivePolicy = await call(stack.baseUrl, 'POST', '/api/settings/archive-policies', {
    token: tokens.admin,
    body: { logType: 'EMAIL_LOG', siteId: SITE, retentionDays: 30, enabled: true },
  });
  expect(archivePolicy.status).toBe(201);

  const traffic = steadyTraffic({ apiUrl: stack.baseUrl, token: tokens.editor, slug: 'drill' });
  try {
    await upgradeUnderWork(traffic, recipients, waiting);
  } finally {
    await traffic.stop();
  }
  expect(traffic.answers.filter((answer) => answer.status !== 200)).toEqual([]);
});

/** Starts the send and the archive run, upgrades while both are under way, then checks each came out whole. */
async function upgradeUnderWork(traffic: ReturnType<typeof steadyTraffic>, recipients: string[], waiting: { id: string; correlationId?: string }) {
  const sent = await sendToRole(stack, tokens, SITE, 'EDITOR');
  expect(sent.recipients).toBe(RECIPIENTS);
  await waitUntil(
    'the send to be under way',
    async () => {
      const batch = (await call(stack.baseUrl, 'GET', `/api/email/batches/${sent.batchId}`, { token: tokens.admin })).body;
      return batch.success > 100 ? batch : null;
    },
    { timeoutMs: 120000, intervalMs: 500 },
  );
  // The archive run starts last, just before the upgrade: 400,000 rows once took less time to export than the
  // send took to get under way, and the run had ended before the new release started.
  const archive = await call(stack.baseUrl, 'POST', '/api/settings/archive-policies/run', {
    token: tokens.admin,
    body: { logType: 'EMAIL_LOG', siteId: SITE },
  });
  expect(archive.status).toBe(202);
  const answersBefore = traffic.answers.length;

  // The upgrade, as docs/production.md says: the new image built (beforeAll), its migrations, then the stack on it.
  const started = Date.now();
  await stack.compose(['run', '--rm', 'migrate']);
  // Still in flight as the new release starts: the send not done, the archive run still running.
  const batchAtSwitch = (await call(stack.baseUrl, 'GET', `/api/email/batches/${sent.batchId}`, { token: tokens.admin })).body;
  const runAtSwitch = (await call(stack.baseUrl, 'GET', '/api/settings/archive-runs/archive:EMAIL_LOG', { token: tokens.admin })).body;
  await stack.up();
  const during = traffic.answers.slice(answersBefore);
  const failedDuring = during.filter((answer) => answer.status !== 200).length;
  console.log(
    `upgrade drill: ${UPGRADE_FROM} to this tree in ${((Date.now() - started) / 1000).toFixed(0)} s; as the new release started ${batchAtSwitch.success} of ${RECIPIENTS} emails were sent and the archive run was ${runAtSwitch.status}; ${failedDuring} of the ${during.length} requests to the service during it failed`,
  );
  expect({ sentAtSwitch: batchAtSwitch.success < RECIPIENTS, runAtSwitch: runAtSwitch.status, requestsDuring: during.length > 100 }).toEqual({
    sentAtSwitch: true,
    runAtSwitch: 'RUNNING',
    requestsDuring: true,
  });

  const batch = await batchDone(stack, tokens.admin, sent.batchId, 600000);
  expect({ success: batch.success, failed: batch.failed }).toEqual({ success: RECIPIENTS, failed: 0 });
  const mail = await mailCountByRecipient(stack);
  expect(recipients.filter((address) => mail.get(address) !== 1)).toEqual([]);

  const archived = await archiveRunEnd(stack, tokens.admin, SITE, 600000);
  expect({ exported: archived.rowsExported, deleted: archived.rowsDeleted }).toEqual({ exported: ARCHIVED_ROWS, deleted: ARCHIVED_ROWS });
  const rows = (await archiveFiles(stack, tokens.admin, SITE)).flatMap((file) =>
    [...file.bytes.toString().matchAll(/old(\d+)@drill\.example/g)].map((match) => match[1]),
  );
  expect({ rows: rows.length, distinct: new Set(rows).size }).toEqual({ rows: ARCHIVED_ROWS, distinct: ARCHIVED_ROWS });

  await approve(stack, tokens.manager, waiting.correlationId);
  expect((await publishedPage(stack, tokens.editor, waiting.id)).status).toBe('PUBLISHED');
}
