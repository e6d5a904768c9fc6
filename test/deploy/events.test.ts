import { call, expectProblem } from '../support/http';
import { waitUntil } from '../support/wait';
import { mailTo, smtpChannel } from '../messaging/harness';
import { recordHealthSeen } from '../../data/deploy/events';
import { DEPLOYMENT_TABLE, recordDeployStage } from '../../data/deploy/registry';
import { recordHistory } from '../support/histories';
import { deployClosed, deploymentOutcome, deployTestFile } from './harness';

/**
 * Status that tells the truth (spec: deployment, third wave): every state change of a service's instances is
 * an event in its history; and the service's owners hear of a deploy that failed, reverted or was rolled back.
 */
const { thisFile, tokens, deployJar, expectRunning } = deployTestFile();
const underSwarm = process.env.DEPLOY_DRIVER === 'swarm';
// Cases no driver touches (a record written to the database, a refused request) run under the docker driver only.
const underDockerDriver = underSwarm ? test.skip : test;
const SITE = 'site-deploys';
// Addresses unique to this file: the mail capture server is shared by the whole run.
const address = (local: string) => `${local}@deploy-notice.example`;

interface ServiceEvent {
  kind: string;
  instanceId: string | null;
  detail: string;
}
const events = async (name: string): Promise<ServiceEvent[]> =>
  (await call(thisFile.api.url, 'GET', `/api/infra/services/${name}/events`, { token: tokens.admin })).body.items;
const eventsOf = async (name: string, kind: string, instanceId?: string) =>
  (await events(name)).filter((event) => event.kind === kind && (!instanceId || event.instanceId === instanceId));
/** The service's events of a kind (of one instance), or null while there are none. */
const someEventsOf = async (name: string, kind: string, instanceId?: string) => {
  const found = await eventsOf(name, kind, instanceId);
  return found.length > 0 ? found : null;
};
const eventsAppear = (name: string, kind: string, instanceId?: string) =>
  waitUntil(`a ${kind} event of ${name}`, () => someEventsOf(name, kind, instanceId), 90000);
const reconcileSchedule = () => thisFile.platform.temporal.client.schedule.getHandle('deploy-reconcile');
/**
 * Waits for `what`, asking for a reconcile whenever none runs: the schedule skips a trigger while its last run
 * (a scale, then its job-log row) is still going, and here it runs on no timer of its own.
 */
const reconcileUntil = <T>(what: string, check: () => Promise<T | null>): Promise<T> =>
  waitUntil(
    what,
    async () => {
      const found = await check();
      if (found) return found;
      if ((await reconcileSchedule().describe()).info.runningActions.length === 0) await reconcileSchedule().trigger();
      return null;
    },
    { timeoutMs: 60000, intervalMs: 1000 },
  );
const instancesOf = async (name: string): Promise<Array<{ id: string; address: string }>> =>
  thisFile.platform
    .db('infra.service_instance as i')
    .join('infra.service as s', 's.id', 'i.service_id')
    .where({ 's.name': name, 'i.state': 'HEALTHY' })
    .select('i.id', 'i.address');

beforeAll(async () => {
  await thisFile.platform.startWorker(['messaging'], { API_INTERNAL_URL: thisFile.api.url });
  await smtpChannel(thisFile.api.url, tokens.admin, 'capture', thisFile.platform.info.mail.smtpPort);
});

test('a deployed instance is STARTED, then HEALTHY once its health check passes; one whose health check starts failing is UNHEALTHY (then, under the docker driver, HEALTHY again once it passes; under the swarm, RESTARTED in a new task)', async () => {
  const accepted = await deployJar('moody-service', 'HelloServer', { healthPath: '/checkup' });
  await expectRunning(accepted);
  // The reconcile surveys a service only once no deploy of it is in progress: this one has drained and pruned.
  await deployClosed(thisFile.platform.temporal, accepted);
  const [instance] = await instancesOf('moody-service');
  const told = await waitUntil('STARTED and HEALTHY events', async () => {
    const [started] = await eventsOf('moody-service', 'STARTED', instance.id);
    const [healthy] = await eventsOf('moody-service', 'HEALTHY', instance.id);
    return started && healthy ? { started, healthy } : null;
  });
  expect(told.healthy.detail).toMatch(underSwarm ? /passed its health check/ : /^Passed its health check \(\/checkup answered 200\)/);

  const sick = await call(thisFile.api.url, 'GET', '/api/moody/sick', { token: tokens.viewer });
  expect(sick.status).toBe(200);
  if (!underSwarm) {
    const [unhealthy] = await reconcileUntil('an UNHEALTHY event', () => someEventsOf('moody-service', 'UNHEALTHY', instance.id));
    expect(unhealthy.detail).toBe('Its health check of /checkup failed: it answered 503.');
    // The edge no longer routes to it either: the instance is told to get well directly.
    expect((await fetch(`http://${instance.address}/well`)).status).toBe(200);
    const [again] = await reconcileUntil('HEALTHY again', async () => {
      const found = (await eventsOf('moody-service', 'HEALTHY', instance.id)).filter((event) => /passes again/.test(event.detail));
      return found.length > 0 ? found : null;
    });
    expect(again.detail).toBe('Its health check of /checkup passes again (it answered 200).');
    expect(await eventsOf('moody-service', 'UNHEALTHY', instance.id)).toHaveLength(1);
  } else {
    // The swarm's own health check (every second, three failures) gives up on the task and starts another in its slot.
    const [unhealthy] = await eventsAppear('moody-service', 'UNHEALTHY', instance.id);
    expect(unhealthy.detail).toMatch(/failed its health check/);
    const [restarted] = await eventsAppear('moody-service', 'RESTARTED');
    expect(restarted.instanceId).not.toBe(instance.id);
    expect(restarted.detail).toMatch(/^Started by the swarm in place of task \w+, which failed\.$/);
  }
}, 300000);

test('a survey that sees the same health twice records its change once: one UNHEALTHY, one HEALTHY again, however often it looks', async () => {
  const accepted = await deployJar('steady-service', 'HelloServer', {});
  await expectRunning(accepted);
  const [instance] = await instancesOf('steady-service');
  const db = thisFile.platform.db;
  const seen = (passing: boolean) => recordHealthSeen(db, { serviceName: 'steady-service', instanceId: instance.id, passing, detail: `seen ${passing}` });
  // Passing while it passes changes nothing; failing twice is one change; passing twice is one change back.
  expect([await seen(true), await seen(false), await seen(false), await seen(true), await seen(true)]).toEqual([false, true, false, true, false]);
  expect((await eventsOf('steady-service', 'UNHEALTHY', instance.id)).map((event) => event.detail)).toEqual(['seen false']);
  expect((await eventsOf('steady-service', 'HEALTHY', instance.id)).filter((event) => event.detail.startsWith('seen'))).toHaveLength(1);
});

underDockerDriver(
  'a stage record that arrives after its deploy finished (an attempt its run gave up on, still running) moves nothing: the deployment stays RUNNING, its events unchanged',
  async () => {
    const accepted = await deployJar('finished-service', 'HelloServer', {});
    await expectRunning(accepted);
    const db = thisFile.platform.db;
    const deployment = () => db(DEPLOYMENT_TABLE).where({ id: accepted.deploymentId }).first('status', 'stage', 'events');
    const before = await deployment();
    expect(before).toMatchObject({ status: 'RUNNING', stage: 'RUNNING' });
    await recordDeployStage(db, { deploymentId: accepted.deploymentId, stage: 'CANARY', message: 'a late record', at: new Date().toISOString() });
    expect(await deployment()).toEqual(before);
  },
);

test("a deploy that fails emails the service's owners (the holders of a role in the site, each in their own locale, and the addresses named), with the reason and a link", async () => {
  await thisFile.platform.db('directory.user').insert({ email: address('layla'), name: 'Layla Admin', locale: 'ar', roles: ['ADMIN'], site_ids: [SITE] });
  await thisFile.platform
    .db('directory.user')
    .insert({ email: address('other-site'), name: 'Omar Admin', locale: 'en', roles: ['ADMIN'], site_ids: ['another-site'] });
  const first = await deployJar('told-service', 'HelloServer', {});
  await expectRunning(first);
  // A redeploy is refused (409) until the first deploy's run has drained and pruned after its switch.
  await deployClosed(thisFile.platform.temporal, first);
  // Layla's address in other letters' case: she is told once, as the role's holder.
  const asked = { siteId: SITE, role: 'ADMIN', emails: [address('Owner'), address('LAYLA')] };
  const put = await call(thisFile.api.url, 'PUT', '/api/infra/services/told-service/notify', { token: tokens.admin, body: asked });
  expect(put.status).toBe(200);
  const notify = { siteId: SITE, role: 'ADMIN', emails: [address('owner'), address('layla')] };
  expect(put.body).toEqual({ notify });
  expect((await call(thisFile.api.url, 'GET', '/api/infra/services/told-service/notify', { token: tokens.admin })).body).toEqual({ notify });

  const broken = await deployJar('told-service', 'ExitAtStart', { redeploy: 'true' });
  const outcome = await deploymentOutcome(thisFile.api.url, tokens.admin, broken.deploymentId);
  expect(['FAILED', 'ROLLED_BACK']).toContain(outcome.status);
  const words =
    outcome.status === 'FAILED' ? { en: 'deploy failed', ar: 'فشل النشر' } : { en: 'deploy was rolled back by the swarm', ar: 'أعاد السرب الإصدار السابق' };
  const arrives = (local: string) =>
    waitUntil(
      `the notice to ${local}`,
      async () => {
        const mails = (await mailTo(thisFile.platform.info.mail.apiUrl, address(local))).filter((mail) => mail.subject.startsWith('told-service:'));
        return mails.length > 0 ? mails : null;
      },
      60000,
    );
  const [english] = await arrives('owner');
  expect(english.subject).toBe(`told-service: ${words.en}`);
  expect(english.html).toContain(outcome.error.reason.slice(0, 40).replace(/&/g, '&amp;'));
  expect(english.html).toContain('/console/services/told-service');
  const [arabic] = await arrives('layla');
  expect(arabic.subject).toBe(`told-service: ${words.ar}`);
  expect(arabic.html).toContain('dir="rtl"');
  await deployClosed(thisFile.platform.temporal, broken).catch(() => undefined);
  await recordHistory(thisFile.platform.temporal, { workflowId: broken.workflowId, runId: broken.runId, name: 'deploy-failed-owners-told' });
  // One notice each, and none to the holder of the role in another site.
  expect(await mailTo(thisFile.platform.info.mail.apiUrl, address('owner'))).toHaveLength(1);
  expect(await mailTo(thisFile.platform.info.mail.apiUrl, address('layla'))).toHaveLength(1);
  expect(await mailTo(thisFile.platform.info.mail.apiUrl, address('other-site'))).toHaveLength(0);
});

underDockerDriver(
  'who is told is refused when it names nobody, is malformed, is asked by a non-ADMIN, or is for a core service; a refusal changes nothing',
  async () => {
    const accepted = await deployJar('quiet-service', 'HelloServer', {});
    await expectRunning(accepted);
    const put = (name: string, body: unknown, token = tokens.admin) => call(thisFile.api.url, 'PUT', `/api/infra/services/${name}/notify`, { token, body });
    for (const body of [
      { siteId: SITE },
      { siteId: SITE, emails: [] },
      { siteId: SITE, emails: ['not-an-address'] },
      { role: 'ADMIN' },
      { siteId: '../x', role: 'ADMIN' },
      { siteId: SITE, role: 'ADMIN', cc: ['x@y.z'] },
    ]) {
      expectProblem(await put('quiet-service', body), 400, 'VALIDATION_FAILED');
    }
    expectProblem(await put('quiet-service', { siteId: SITE, role: 'ADMIN' }, tokens.viewer), 403, 'FORBIDDEN');
    expectProblem(await put('content', { siteId: SITE, role: 'ADMIN' }), 409, 'SERVICE_NOT_DYNAMIC');
    expectProblem(await put('no-such-service', { siteId: SITE, role: 'ADMIN' }), 404, 'SERVICE_NOT_FOUND');
    expect((await call(thisFile.api.url, 'GET', '/api/infra/services/quiet-service/notify', { token: tokens.admin })).body).toEqual({ notify: null });
    const deleted = await call(thisFile.api.url, 'DELETE', '/api/infra/services/quiet-service/notify', { token: tokens.admin });
    expect(deleted.body).toEqual({ notify: null });
  },
);

(underSwarm ? test : test.skip)(
  'under the swarm, a task holds its memory limit as the engine reports it; allocating past it, it is killed and told OOM_KILLED, and the task the swarm starts in its place RESTARTED',
  async () => {
    const accepted = await deployJar('greedy-service', 'HelloServer', { memoryMb: '160', ENV_JAVA_TOOL_OPTIONS: '-Xmx700m' });
    await expectRunning(accepted);
    const [instance] = await instancesOf('greedy-service');
    // The limit as the engine reports it on the task's container, not as it was asked for.
    const limits = await call(thisFile.api.url, 'GET', '/api/infra/services/greedy-service/limits', { token: tokens.admin });
    expect(limits.status).toBe(200);
    expect(limits.body.instances).toEqual([expect.objectContaining({ id: instance.id, limits: expect.objectContaining({ memoryMb: 160 }) })]);
    // 400 MiB held by a JVM allowed 700 MiB of heap, in a task allowed 160 MiB: the kernel kills it.
    await call(thisFile.api.url, 'GET', '/api/greedy/allocate/400', { token: tokens.viewer }).catch(() => null);
    const [oom] = await eventsAppear('greedy-service', 'OOM_KILLED', instance.id);
    expect(oom.detail).toMatch(/exited with code 137.*The kernel killed it for using more than its memory limit\.$/);
    const [restarted] = await eventsAppear('greedy-service', 'RESTARTED');
    expect(restarted.instanceId).not.toBe(instance.id);
    expect(await eventsOf('greedy-service', 'EXITED', instance.id)).toEqual([]);
  },
  300000,
);
