import fs from 'node:fs';
import path from 'node:path';
import { call, expectProblem } from '../support/http';
import { freePort } from '../support/slots';
import { containersOf, deployClosed, imagesOf, deployTestFile } from './harness';
import { waitUntil } from '../support/wait';
import { buildJar, postJar } from './jars';

const { thisFile, tokens, scope, deployJar, worker, expectRunning, trafficTo, deployImage } = deployTestFile();

// "Stopped" counts running containers: the swarm driver's stopped tasks keep theirs as the swarm's task history.

test('a redeploy and then a rollback under a steady stream of gateway requests fail none of them; the history lists every deploy', async () => {
  const first = await deployJar('stream-service', 'HelloServer', { ENV_VERSION: '1' });
  await expectRunning(first);
  await deployClosed(thisFile.platform.temporal, first);
  const traffic = await trafficTo('stream');
  const beforeRedeploy = traffic.answers.length;
  const redeploy = await deployJar('stream-service', 'HelloServer', { ENV_VERSION: '2', redeploy: 'true' });
  expect(redeploy.workflowId).toBe('deploy:stream-service');
  await expectRunning(redeploy);
  const redeployed = traffic.answers.length;
  await waitUntil('old instances stopped', async () => (await containersOf(thisFile.platform.docker.docker, scope(), 'stream-service', false)).length === 1);
  await deployClosed(thisFile.platform.temporal, redeploy);
  const mark = traffic.answers.length;
  await waitUntil('traffic after the redeploy', async () => traffic.answers.length > mark + 20);

  const beforeRollback = traffic.answers.length;
  const rollback = await call(thisFile.api.url, 'POST', '/api/infra/services/stream-service/rollback', { token: tokens.admin });
  expect(rollback.status).toBe(202);
  await expectRunning(rollback.body);
  const rolledBack = traffic.answers.length;
  await waitUntil('old instances stopped', async () => (await containersOf(thisFile.platform.docker.docker, scope(), 'stream-service', false)).length === 1);
  const mark2 = traffic.answers.length;
  await waitUntil('traffic after the rollback', async () => traffic.answers.length > mark2 + 20);
  const answers = await traffic.stop();

  expect(answers.filter((answer) => answer.status !== 200)).toEqual([]);
  const versions = answers.map((answer) => answer.version);
  expect(versions[0]).toBe('1');
  expect(versions).toContain('2');
  expect(versions[versions.length - 1]).toBe('1');
  // A switch is before-then-after: the new instances join the edge before the old ones leave it, so while
  // a deploy runs both versions answer. Once it is RUNNING only the new one does, and the old one never
  // comes back (two loops: at most two requests were under way when RUNNING was seen).
  const only = (version: string, from: number, to: number) => versions.slice(from, to).filter((seen) => seen !== version);
  expect(only('1', 0, beforeRedeploy)).toEqual([]);
  expect(only('2', redeployed + 2, beforeRollback)).toEqual([]);
  expect(only('1', rolledBack + 2, versions.length)).toEqual([]);
  expect(beforeRollback - (redeployed + 2)).toBeGreaterThan(15);

  const history = await call(thisFile.api.url, 'GET', '/api/infra/services/stream-service/deployments', { token: tokens.admin });
  expect(history.body.items).toEqual([
    expect.objectContaining({
      deploymentId: rollback.body.deploymentId,
      status: 'RUNNING',
      image: `${scope()}/stream-service:1`,
      rollbackOf: first.deploymentId,
      requestedBy: 'ada',
    }),
    expect.objectContaining({ deploymentId: redeploy.deploymentId, status: 'SUPERSEDED', image: `${scope()}/stream-service:2` }),
    expect.objectContaining({ deploymentId: first.deploymentId, status: 'SUPERSEDED', image: `${scope()}/stream-service:1` }),
  ]);
});

test("a version's image is pruned once five newer deploys succeeded, from the engine and (swarm driver) from the registry; an undeploy removes the rest", async () => {
  const registry = thisFile.platform.config.deploy.registry;
  for (let version = 1; version <= 6; version++) {
    // A file of its own in each JAR: six distinct images, not one image under six tags.
    const jar = await buildJar({
      mainClass: 'HelloServer',
      entries: { 'application.properties': 'spring.application.name=keeper-service\n', 'version.txt': String(version) },
    });
    const accepted = await postJar({ apiUrl: thisFile.api.url, token: tokens.admin, jar, fields: version > 1 ? { redeploy: 'true' } : {} });
    expect(accepted.status).toBe(202);
    await expectRunning(accepted.body);
    await deployClosed(thisFile.platform.temporal, accepted.body);
  }
  const tags = (versions: number[]) => versions.map((version) => `${scope()}/keeper-service:${version}`).sort();
  const registryTags = async () => {
    const answer = await fetch(`http://${registry}/v2/${scope()}/keeper-service/tags/list`);
    if (answer.status === 404) return [];
    const { tags: listed } = (await answer.json()) as { tags: string[] | null };
    return (listed ?? []).map((tag) => `${scope()}/keeper-service:${tag}`).sort();
  };
  if (registry) {
    expect(await registryTags()).toEqual(tags([2, 3, 4, 5, 6]));
    // Deleted by its digest: the first version's manifest is gone from the registry, not only its tag.
    const first = (
      await thisFile.platform.docker.docker
        .getImage(`${scope()}/keeper-service:1`)
        .inspect()
        .catch(() => null)
    )?.RepoDigests?.find((digest) => digest.startsWith(`${registry}/`));
    if (first) expect((await fetch(`http://${registry}/v2/${scope()}/keeper-service/manifests/${first.split('@')[1]}`)).status).toBe(404);
  } else {
    // Under the swarm driver the engine may keep a pruned image a while longer: a stopped task's container (the swarm's history) holds it.
    expect((await imagesOf(thisFile.platform.docker.docker, scope(), 'keeper-service')).flatMap((image) => image.RepoTags ?? []).sort()).toEqual(
      tags([2, 3, 4, 5, 6]),
    );
  }

  const undeploy = await call(thisFile.api.url, 'DELETE', '/api/infra/services/keeper-service', { token: tokens.admin });
  expect(undeploy.status).toBe(202);
  await thisFile.platform.temporal.client.workflow.getHandle(undeploy.body.workflowId, undeploy.body.runId).result();
  expect(await imagesOf(thisFile.platform.docker.docker, scope(), 'keeper-service')).toEqual([]);
  if (registry) expect(await registryTags()).toEqual([]);
});

test('rollback without an earlier successful deploy -> 409 NO_PREVIOUS_VERSION; with its image gone -> 409 NO_PREVIOUS_VERSION', async () => {
  const only = await deployJar('lone-service');
  await expectRunning(only);
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/infra/services/lone-service/rollback', { token: tokens.admin, body: {} }),
    409,
    'NO_PREVIOUS_VERSION',
  );

  await deployClosed(thisFile.platform.temporal, only);
  const second = await deployJar('lone-service', 'HelloServer', { redeploy: 'true', ENV_VERSION: '2' });
  await expectRunning(second);
  await waitUntil('the first instance stopped', async () => (await containersOf(thisFile.platform.docker.docker, scope(), 'lone-service', false)).length === 1);
  await thisFile.platform.docker.docker.getImage(`${scope()}/lone-service:1`).remove({ force: true });
  expectProblem(await call(thisFile.api.url, 'POST', '/api/infra/services/lone-service/rollback', { token: tokens.admin }), 409, 'NO_PREVIOUS_VERSION');
});

test("a container killed behind the platform's back is replaced by the reconcile schedule", async () => {
  const accepted = await deployJar('phoenix-service');
  await expectRunning(accepted);
  const [victim] = await containersOf(thisFile.platform.docker.docker, scope(), 'phoenix-service');
  await thisFile.platform.docker.docker.getContainer(victim.Id).remove({ force: true });

  const schedule = thisFile.platform.temporal.client.schedule.getHandle('deploy-reconcile');
  expect((await schedule.describe()).action).toEqual(expect.objectContaining({ workflowType: 'reconcileServices' }));
  await schedule.trigger();

  const replacement = await waitUntil('a replacement container', async () => {
    const running = await containersOf(thisFile.platform.docker.docker, scope(), 'phoenix-service', false);
    return running.length === 1 && running[0].Id !== victim.Id ? running[0] : null;
  });
  await waitUntil(
    'the gateway routes to the replacement',
    async () => (await call(thisFile.api.url, 'GET', '/api/phoenix/x', { token: tokens.viewer })).status === 200,
  );
  const service = await call(thisFile.api.url, 'GET', '/api/infra/services/phoenix-service', { token: tokens.admin });
  expect(service.body.instances).toEqual([expect.objectContaining({ containerId: replacement.Id, state: 'HEALTHY' })]);
  expect(service.body.status).toBe('RUNNING');

  // The tick wrote its job-log row: a platform job, with no site of its own.
  const logged = await waitUntil('the reconcile tick in the job log', async () => {
    const page = await call(thisFile.api.url, 'GET', '/api/settings/scheduler-job-logs?job=deploy-reconcile&siteId=_platform', { token: tokens.admin });
    return page.body.items.find((item: { message: string }) => item.message.includes('phoenix-service')) ?? null;
  });
  expect(logged).toEqual(expect.objectContaining({ siteId: '_platform', status: 'SUCCESS', rowsAffected: expect.any(Number), finishedAt: expect.any(String) }));
  expect(logged.message).toMatch(/^reconciled \d+ service\(s\): .*phoenix-service/);
});

// Under the swarm driver a host port is refused (test/deploy/swarm.test.ts): a swarm publishes on every address.
const underDockerDriver = process.env.DEPLOY_DRIVER === 'swarm' ? test.skip : test;

underDockerDriver('an image deployment with hostPort answers on that port, bound on 127.0.0.1, and the answer warns that it bypasses the gateway', async () => {
  const image = `${scope()}-img/hello:1`;
  const jar = await buildJar({ mainClass: 'HelloServer' });
  const context = path.dirname(jar);
  fs.writeFileSync(`${context}/Dockerfile`, 'FROM opsflow/jre:17\nCOPY service.jar /app/app.jar\nENTRYPOINT ["java", "-jar", "/app/app.jar"]\n');
  const build = await thisFile.platform.docker.docker.buildImage(
    { context, src: ['Dockerfile', 'service.jar'] },
    { t: image, labels: { 'opsflow.scope': scope() } },
  );
  await new Promise((resolve, reject) =>
    thisFile.platform.docker.docker.modem.followProgress(build, (error: Error | null) => (error ? reject(error) : resolve(null))),
  );

  const hostPort = await freePort();
  const accepted = await deployImage({ name: 'image-service', image, port: 8080, hostPort, envVars: { GREETING: 'direct' }, healthPath: '/actuator/health' });
  expect(accepted.status).toBe(202);
  expect(accepted.body.warnings).toEqual([expect.stringContaining(`hostPort ${hostPort} is published on 127.0.0.1`)]);
  await expectRunning(accepted.body);

  const direct = await fetch(`http://127.0.0.1:${hostPort}/x`);
  expect(await direct.json()).toEqual(expect.objectContaining({ path: '/x', greeting: 'direct', userId: null }));
  const [container] = await containersOf(thisFile.platform.docker.docker, scope(), 'image-service', false);
  const details = await thisFile.platform.docker.docker.getContainer(container.Id).inspect();
  expect(details.HostConfig.PortBindings).toEqual({ '8080/tcp': [{ HostIp: '127.0.0.1', HostPort: String(hostPort) }] });
  expect((await call(thisFile.api.url, 'GET', '/api/image/x', { token: tokens.viewer })).body.userId).toBe('vic');
});

test('the deployments worker killed during the health check: a new worker finishes the deploy, with exactly one container', async () => {
  const second = await thisFile.platform.startWorker(['deployments']);
  const accepted = await deployJar('durable-service', 'HelloServer', { ENV_START_DELAY_MS: '6000' });
  await waitUntil(
    'the health check',
    async () => (await call(thisFile.api.url, 'GET', `/api/infra/deployments/${accepted.deploymentId}`, { token: tokens.admin })).body.stage === 'HEALTH_CHECK',
  );
  // Both workers die: whichever held the activity is gone mid-poll.
  await worker().kill();
  await second.kill();
  await thisFile.platform.startWorker(['deployments']);

  await expectRunning(accepted);
  expect(await containersOf(thisFile.platform.docker.docker, scope(), 'durable-service')).toHaveLength(1);
  expect((await call(thisFile.api.url, 'GET', '/api/durable/x', { token: tokens.viewer })).status).toBe(200);
});
