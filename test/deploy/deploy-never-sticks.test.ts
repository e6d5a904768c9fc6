import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { findTemporalCli } from '../../temporal-config/temporal-cli';
import { call } from '../support/http';
import { recordHistory, recordNewestHistory } from '../support/histories';
import { freePort } from '../support/slots';
import { containersOf, deployClosed, deploymentOutcome, leftContainersOf, deployTestFile } from './harness';
import { waitUntil } from '../support/wait';
import { buildJar } from './jars';
import { runFailure } from '../support/failures';
import { MockActivityEnvironment } from '@temporalio/testing';
import { buildServiceImage } from '../../activities/deploy/build-service-image';
import { discardUploadedJar, uploadedJarDir } from '../../data/deploy/jar-uploads';

/**
 * A deploy never leaves a service stuck: an undo step that fails, a run terminated from the outside, and a
 * host-port redeploy that fails after stopping the old instance all end with the service deployable (and,
 * for the redeploy, serving its previous version again).
 */

// Unhealthy instances fail their health check in 10 s instead of the suite's 60.
const { thisFile, tokens, scope, deployJar, expectRunning, deployImage } = deployTestFile({ DEPLOY_HEALTH_TIMEOUT_SECONDS: '10' });

const docker = () => thisFile.platform.docker.docker;
const stageOf = async (deploymentId: string) =>
  (await call(thisFile.api.url, 'GET', `/api/infra/deployments/${deploymentId}`, { token: tokens.admin })).body.stage;

/** The run's failure, as Temporal reports it: the ApplicationFailure inside the WorkflowFailedError. */
const failureOf = (started: { workflowId: string; runId: string }) =>
  runFailure(thisFile.platform.temporal.client.workflow.getHandle(started.workflowId, started.runId).result());

test('an undo step that fails (the registry refuses to remove the instance) does not stop the others; the redeploy still ends FAILED with its own reason, the old version serves, and the next deploy succeeds', async () => {
  const first = await deployJar('stubborn-service', 'HelloServer');
  await expectRunning(first);
  await deployClosed(thisFile.platform.temporal, first);
  // From now on every removal of an instance row fails in PostgreSQL itself, as a lost disk or a lock would.
  await thisFile.platform.db.raw(`
    create function refuse_instance_delete() returns trigger language plpgsql as $$ begin raise exception 'instance rows are read-only for this test'; end $$;
    create trigger refuse_instance_delete before delete on infra.service_instance for each statement execute function refuse_instance_delete();
  `);
  let failing: any;
  try {
    failing = await deployJar('stubborn-service', 'NeverHealthy', { redeploy: 'true' });
    const outcome = await deploymentOutcome(thisFile.api.url, tokens.admin, failing.deploymentId);
    expect(outcome).toEqual(expect.objectContaining({ status: 'FAILED', error: expect.objectContaining({ stage: 'HEALTH_CHECK' }) }));
    const failure = await failureOf(failing);
    expect(failure.type).toBe('DEPLOY_FAILED');
    expect(failure.message).toContain('failed at HEALTH_CHECK');
    expect((failure.details?.[0] as { undoFailures: string[] }).undoFailures).toEqual([expect.stringContaining('instance rows are read-only for this test')]);
    await recordHistory(thisFile.platform.temporal, { workflowId: failing.workflowId, runId: failing.runId, name: 'deploy-undo-step-failed' });
    // The undo after the failed one ran: the image the failed deploy built is gone.
    const images = await docker().listImages({ filters: { reference: [`${scope()}/stubborn-service:2`] } });
    expect(images).toEqual([]);
    expect((await call(thisFile.api.url, 'GET', '/api/stubborn/x', { token: tokens.viewer })).status).toBe(200);
  } finally {
    await thisFile.platform.db.raw('drop trigger refuse_instance_delete on infra.service_instance; drop function refuse_instance_delete()');
  }

  // The container the failed undo could not remove goes with the next deploy, which succeeds.
  expect((await containersOf(docker(), scope(), 'stubborn-service')).map((container) => container.Labels['opsflow.deployment'])).toContain(
    failing.deploymentId,
  );
  const again = await deployJar('stubborn-service', 'HelloServer', { redeploy: 'true' });
  await expectRunning(again);
  await deployClosed(thisFile.platform.temporal, again);
  expect(
    (await leftContainersOf(docker(), { scope: scope(), serviceName: 'stubborn-service', driver: thisFile.platform.config.deploy.driver })).map(
      (container) => container.Labels['opsflow.deployment'],
    ),
  ).toEqual([again.deploymentId]);
});

test('a deploy terminated mid-health-check (temporal workflow terminate) does not block the service: the next deploy succeeds and leaves no container of the dead one', async () => {
  const dead = await deployJar('orphaned-service', 'NeverHealthy');
  await waitUntil('the health check', async () => (await stageOf(dead.deploymentId)) === 'HEALTH_CHECK');
  const cli = findTemporalCli();
  if (!cli) throw new Error('the Temporal CLI is needed to terminate a run as an operator would');
  await promisify(execFile)(cli.path, [
    'workflow',
    'terminate',
    '--workflow-id',
    dead.workflowId,
    '--run-id',
    dead.runId,
    '--reason',
    'operator',
    '--address',
    thisFile.platform.config.temporal.address,
    '--namespace',
    thisFile.platform.config.temporal.namespace,
  ]);
  // A swarm starts its task's container on its own time; the docker driver's exists once STARTING is done.
  const [left] = await waitUntil("the dead deploy's container", async () => {
    const containers = await containersOf(docker(), scope(), 'orphaned-service');
    return containers.length > 0 ? containers : null;
  });
  expect(left.Labels['opsflow.deployment']).toBe(dead.deploymentId);

  const next = await deployJar('orphaned-service', 'HelloServer');
  await expectRunning(next);
  await deployClosed(thisFile.platform.temporal, next);
  const containers = await leftContainersOf(docker(), { scope: scope(), serviceName: 'orphaned-service', driver: thisFile.platform.config.deploy.driver });
  expect(containers.map((container) => container.Labels['opsflow.deployment'])).toEqual([next.deploymentId]);
  const deadRow = (await call(thisFile.api.url, 'GET', `/api/infra/deployments/${dead.deploymentId}`, { token: tokens.admin })).body;
  expect(deadRow).toEqual(expect.objectContaining({ status: 'FAILED', error: expect.objectContaining({ reason: expect.stringContaining('TERMINATED') }) }));
  expect((await call(thisFile.api.url, 'GET', '/api/orphaned/x', { token: tokens.viewer })).status).toBe(200);
});

// Under the swarm driver a host port is refused (test/deploy/swarm.test.ts): a swarm publishes on every address.
const underDockerDriver = process.env.DEPLOY_DRIVER === 'swarm' ? test.skip : test;

underDockerDriver('a host-port redeploy that fails after stopping the old instance brings the old version back on that port', async () => {
  const build = async (image: string, mainClass: string) => {
    const jar = await buildJar({ mainClass });
    const context = path.dirname(jar);
    fs.writeFileSync(`${context}/Dockerfile`, 'FROM opsflow/jre:17\nCOPY service.jar /app/app.jar\nENTRYPOINT ["java", "-jar", "/app/app.jar"]\n');
    const stream = await docker().buildImage({ context, src: ['Dockerfile', 'service.jar'] }, { t: image, labels: { 'opsflow.scope': scope() } });
    await new Promise((resolve, reject) => docker().modem.followProgress(stream, (error: Error | null) => (error ? reject(error) : resolve(null))));
  };
  const good = `${scope()}-img/ported:1`;
  const broken = `${scope()}-img/ported:2`;
  await Promise.all([build(good, 'HelloServer'), build(broken, 'ExitAtStart')]);
  const hostPort = await freePort();
  const body = { name: 'ported-service', port: 8080, hostPort, envVars: { GREETING: 'old' }, healthPath: '/actuator/health' };

  const first = await deployImage({ ...body, image: good });
  await expectRunning(first.body);
  await deployClosed(thisFile.platform.temporal, first.body);
  expect(((await (await fetch(`http://127.0.0.1:${hostPort}/x`)).json()) as { greeting: string }).greeting).toBe('old');

  const redeploy = await deployImage({ ...body, image: broken, redeploy: true });
  expect(redeploy.status).toBe(202);
  expect(await deploymentOutcome(thisFile.api.url, tokens.admin, redeploy.body.deploymentId)).toEqual(expect.objectContaining({ status: 'FAILED' }));
  expect((await failureOf(redeploy.body)).type).toBe('DEPLOY_FAILED');
  await recordHistory(thisFile.platform.temporal, {
    workflowId: redeploy.body.workflowId,
    runId: redeploy.body.runId,
    name: 'deploy-host-port-redeploy-restored',
  });

  const served = await fetch(`http://127.0.0.1:${hostPort}/x`);
  expect(((await served.json()) as { greeting: string }).greeting).toBe('old');
  const service = (await call(thisFile.api.url, 'GET', '/api/infra/services/ported-service', { token: tokens.admin })).body;
  expect(service).toEqual(expect.objectContaining({ status: 'RUNNING', image: good }));
  expect(service.instances).toEqual([expect.objectContaining({ state: 'HEALTHY' })]);
  const containers = await containersOf(docker(), scope(), 'ported-service');
  expect(containers.map((container) => [container.Labels['opsflow.deployment'], container.State])).toEqual([[first.body.deploymentId, 'running']]);
  expect((await call(thisFile.api.url, 'GET', '/api/ported/x', { token: tokens.viewer })).body.greeting).toBe('old');
});

test('a redeploy terminated mid-health-check does not keep the service from the reconcile: the schedule records it FAILED, removes its container, and the old version serves on', async () => {
  const first = await deployJar('steady-service', 'HelloServer');
  await expectRunning(first);
  await deployClosed(thisFile.platform.temporal, first);
  const dead = await deployJar('steady-service', 'NeverHealthy', { redeploy: 'true' });
  await waitUntil('the health check', async () => (await stageOf(dead.deploymentId)) === 'HEALTH_CHECK');
  await thisFile.platform.temporal.client.workflow.getHandle(dead.workflowId, dead.runId).terminate('operator');

  await thisFile.platform.temporal.client.schedule.getHandle('deploy-reconcile').trigger();
  const settled = await waitUntil('the dead deploy recorded FAILED', async () => {
    const row = (await call(thisFile.api.url, 'GET', `/api/infra/deployments/${dead.deploymentId}`, { token: tokens.admin })).body;
    return row.status === 'FAILED' ? row : null;
  });
  expect(settled.error.reason).toContain('TERMINATED');
  await waitUntil("the dead deploy's container removed", async () => {
    const containers = await leftContainersOf(docker(), { scope: scope(), serviceName: 'steady-service', driver: thisFile.platform.config.deploy.driver });
    return containers.every((container) => container.Labels['opsflow.deployment'] === first.deploymentId) ? containers : null;
  });
  const service = (await call(thisFile.api.url, 'GET', '/api/infra/services/steady-service', { token: tokens.admin })).body;
  expect(service).toEqual(expect.objectContaining({ status: 'RUNNING', currentDeploymentId: first.deploymentId }));
  expect((await call(thisFile.api.url, 'GET', '/api/steady/x', { token: tokens.viewer })).status).toBe(200);
  await recordNewestHistory(thisFile.platform.temporal, { workflowType: 'reconcileServices', name: 'reconcile-dead-redeploy' });
});

test('the image step is safe to repeat after an attempt that ended at any point: a retry that finds the image removes the container the ended attempt left; one that does not removes that container and makes the image, with the JAR, its user and entry point', async () => {
  const deployed = await deployJar('image-again', 'HelloServer');
  await expectRunning(deployed);
  await deployClosed(thisFile.platform.temporal, deployed);
  const { db, config } = thisFile.platform;
  const image = `${scope()}/image-again:1`;
  // Each attempt runs in an activity's context of its own, as the worker gives it (the step heartbeats).
  const attempt = () =>
    new MockActivityEnvironment().run(buildServiceImage({ db, docker: docker(), config, runStatusOf: async () => 'RUNNING' }), {
      deploymentId: deployed.deploymentId,
    });
  // What an attempt that ended between its container's creation and its removal leaves: the container, by its name.
  const leftName = `${scope()}-image-${deployed.deploymentId}`;
  const leaveContainer = () =>
    docker().createContainer({
      name: leftName,
      Image: config.deploy.baseImage,
      Entrypoint: ['java'],
      Labels: { 'opsflow.scope': scope(), 'opsflow.deployment': deployed.deploymentId },
    });
  const leftContainer = () => docker().listContainers({ all: true, filters: { name: [`^/${leftName}$`] } });

  // An attempt killed after its commit: the image is there.
  await leaveContainer();
  expect(await attempt()).toEqual({ image });
  expect(await leftContainer()).toEqual([]);

  // An attempt killed before its commit: no image yet (untagged here; the running instance keeps its layers), the JAR still uploaded.
  await docker().getImage(image).remove({ force: true });
  const jar = await buildJar({ mainClass: 'HelloServer' });
  fs.mkdirSync(uploadedJarDir(config.dataDir, deployed.deploymentId), { recursive: true });
  fs.copyFileSync(jar, path.join(uploadedJarDir(config.dataDir, deployed.deploymentId), 'app.jar'));
  await leaveContainer();
  expect(await attempt()).toEqual({ image });
  expect(await leftContainer()).toEqual([]);
  const made = await docker().getImage(image).inspect();
  expect(made.Config).toEqual(
    expect.objectContaining({
      User: '65534:65534',
      WorkingDir: '/app',
      Entrypoint: ['java', '-jar', '/app/app.jar'],
      Cmd: null,
      Labels: expect.objectContaining({ 'opsflow.scope': scope(), 'opsflow.service': 'image-again' }),
    }),
  );
  // The image runs the JAR it was given, as the unprivileged user.
  // A terminal, so the logs come as written, without the engine's stream headers.
  const probe = await docker().createContainer({ Image: image, Tty: true, Entrypoint: ['sh', '-c', 'id -u && sha256sum /app/app.jar'] });
  try {
    await probe.start();
    await probe.wait();
    const said = (await probe.logs({ stdout: true, stderr: true })).toString().split(/\r?\n/);
    expect(said[0]).toBe('65534');
    expect(said[1]).toBe(`${crypto.createHash('sha256').update(fs.readFileSync(jar)).digest('hex')}  /app/app.jar`);
  } finally {
    await probe.remove({ force: true });
  }
  await discardUploadedJar({ dataDir: config.dataDir, deploymentId: deployed.deploymentId });
});

test("the reconcile removes the containers images were made from that no attempt removed (their deployment ended, or never was), and leaves a service's instance whose name looks like one", async () => {
  const deployed = await deployJar('image-stray', 'HelloServer');
  await expectRunning(deployed);
  await deployClosed(thisFile.platform.temporal, deployed);
  const { config } = thisFile.platform;
  const made = (name: string, labels: Record<string, string>) =>
    docker().createContainer({ name, Image: config.deploy.baseImage, Entrypoint: ['java'], Labels: labels });
  // Left by an image step whose run ended with no later attempt: its deployment is RUNNING now.
  const ended = await made(`${scope()}-image-${deployed.deploymentId}`, { 'opsflow.scope': scope(), 'opsflow.deployment': deployed.deploymentId });
  const unknownDeployment = crypto.randomUUID();
  const unknown = await made(`${scope()}-image-${unknownDeployment}`, { 'opsflow.scope': scope(), 'opsflow.deployment': unknownDeployment });
  // A service named `image` has instances named `{scope}-image-{eight characters}`, with its service's label.
  const instanceLike = await made(`${scope()}-image-${deployed.deploymentId.slice(0, 8)}`, {
    'opsflow.scope': scope(),
    'opsflow.service': 'image',
    'opsflow.deployment': deployed.deploymentId,
  });
  try {
    await thisFile.platform.temporal.client.schedule.getHandle('deploy-reconcile').trigger();
    const gone = async (id: string) =>
      docker()
        .getContainer(id)
        .inspect()
        .then(
          () => false,
          (error: { statusCode?: number }) => error.statusCode === 404,
        );
    await waitUntil('the stray image containers removed', async () => (await gone(ended.id)) && (await gone(unknown.id)));
    expect(await gone(instanceLike.id)).toBe(false);
  } finally {
    for (const container of [ended, unknown, instanceLike]) await container.remove({ force: true }).catch(() => undefined);
  }
});
