import crypto from 'node:crypto';
import fs from 'node:fs';
import { createDocker } from '../../adapters/docker';
import { call, expectProblem } from '../support/http';
import { containersOf, deploymentOutcome, imagesOf, networksOf, undoFailuresOf, deployTestFile } from './harness';
import { buildJar, postJar } from './jars';

// A short health deadline, so the JAR that never answers fails within the test's time.
const { thisFile, tokens, scope, deployImage, expectRunning } = deployTestFile({ DEPLOY_HEALTH_TIMEOUT_SECONDS: '8' });

/**
 * A failed first deploy leaves no service to undeploy: a network it left would stay for good. Checked under
 * the docker driver; the swarm's overlay can outlive the undo by a moment (its removal is then logged and
 * left), which is not settled yet.
 */
async function expectNoNetworkLeft(serviceName: string): Promise<void> {
  if (process.env.DEPLOY_DRIVER === 'swarm') return;
  expect(await networksOf(thisFile.platform.docker.docker, scope(), serviceName)).toEqual([]);
}

const hello = (name: string) => buildJar({ mainClass: 'HelloServer', entries: { 'application.properties': `spring.application.name=${name}\n` } });

/** Nothing of the service exists: no registry row, no deployment row, no container, no image. */
async function expectNothingDeployed(serviceName: string) {
  expect(await thisFile.platform.db('infra.service').where({ name: serviceName })).toEqual([]);
  expect(await thisFile.platform.db('infra.deployment').where({ service_name: serviceName })).toEqual([]);
  expect(await containersOf(thisFile.platform.docker.docker, scope(), serviceName)).toEqual([]);
  expect(await imagesOf(thisFile.platform.docker.docker, scope(), serviceName)).toEqual([]);
}

describe('POST /api/infra/deploy/jar/inspect: what a JAR says of itself, nothing deployed', () => {
  const inspect = (jar: string, token = tokens.admin) => postJar({ apiUrl: thisFile.api.url, token, jar, path: '/api/infra/deploy/jar/inspect' });

  test("name and port from application.properties, or Spring Boot's default port when it names none", async () => {
    const named = await buildJar({
      mainClass: 'HelloServer',
      entries: { 'application.properties': 'spring.application.name=inspected-one\nserver.port=9091\n' },
    });
    expect(await inspect(named)).toEqual({ status: 200, body: { mainClass: 'HelloServer', serviceName: 'inspected-one', port: 9091, portFromJar: true } });
    const bare = await buildJar({ mainClass: 'HelloServer' });
    expect(await inspect(bare)).toEqual({ status: 200, body: { mainClass: 'HelloServer', serviceName: null, port: 8080, portFromJar: false } });
    await expectNothingDeployed('inspected-one');
  });

  test('a JAR that is not a zip -> 400 INVALID_JAR; a VIEWER -> 403', async () => {
    const notZip = await buildJar({ mainClass: 'HelloServer' });
    fs.writeFileSync(notZip, 'not a zip');
    expect(await inspect(notZip)).toEqual({ status: 400, body: expect.objectContaining({ code: 'INVALID_JAR' }) });
    const viewer = await thisFile.platform.token({ sub: 'vic', roles: ['VIEWER'], sites: ['s1'] });
    expect(await inspect(await hello('x'), viewer)).toEqual({ status: 403, body: expect.objectContaining({ code: 'FORBIDDEN' }) });
  });
});

describe('bad JARs are refused before anything is deployed', () => {
  test('not a zip -> 400 INVALID_JAR', async () => {
    const notZip = await buildJar({ mainClass: 'HelloServer' });
    fs.writeFileSync(notZip, 'this is not a zip archive at all');
    const answer = await postJar({ apiUrl: thisFile.api.url, token: tokens.admin, jar: notZip, fields: { serviceName: 'not-zip' } });
    expect(answer).toEqual({ status: 400, body: expect.objectContaining({ code: 'INVALID_JAR' }) });
    await expectNothingDeployed('not-zip');
  });

  test('no META-INF/MANIFEST.MF with a Main-Class -> 400 INVALID_JAR', async () => {
    const jar = await buildJar({ mainClass: null, entries: { 'application.properties': 'spring.application.name=no-manifest\n' } });
    const answer = await postJar({ apiUrl: thisFile.api.url, token: tokens.admin, jar });
    expect(answer).toEqual({ status: 400, body: expect.objectContaining({ code: 'INVALID_JAR' }) });
    await expectNothingDeployed('no-manifest');
  });

  test('a zip-slip entry (../) or an absolute path -> 400 UNSAFE_JAR', async () => {
    for (const entry of ['../../etc/evil.sh', '/etc/evil.sh', 'lib/../../evil.sh']) {
      const jar = await buildJar({
        mainClass: 'HelloServer',
        entries: { 'application.properties': 'spring.application.name=slip-service\n' },
        unsafeEntries: { [entry]: 'boom' },
      });
      const answer = await postJar({ apiUrl: thisFile.api.url, token: tokens.admin, jar });
      expect({ entry, ...answer }).toEqual({ entry, status: 400, body: expect.objectContaining({ code: 'UNSAFE_JAR' }) });
    }
    await expectNothingDeployed('slip-service');
  });

  test('an entry that inflates to more than 20 times the upload -> 400 UNSAFE_JAR', async () => {
    const jar = await buildJar({
      mainClass: 'HelloServer',
      entries: { 'application.properties': 'spring.application.name=bomb-service\n', 'zeros.bin': Buffer.alloc(64 * 1024 * 1024) },
    });
    const answer = await postJar({ apiUrl: thisFile.api.url, token: tokens.admin, jar });
    expect(answer).toEqual({ status: 400, body: expect.objectContaining({ code: 'UNSAFE_JAR' }) });
    await expectNothingDeployed('bomb-service');
  });

  test('no serviceName and no spring.application.name -> 400 MISSING_APPLICATION_NAME', async () => {
    const jar = await buildJar({ mainClass: 'HelloServer', entries: { 'application.properties': 'server.port=8081\n' } });
    const answer = await postJar({ apiUrl: thisFile.api.url, token: tokens.admin, jar });
    expect(answer).toEqual({ status: 400, body: expect.objectContaining({ code: 'MISSING_APPLICATION_NAME' }) });
    expect(await thisFile.platform.db('infra.deployment')).toEqual([]);
  });

  test('a reserved slug -> 409 SLUG_RESERVED (settings-service routes under /api/settings)', async () => {
    const answer = await postJar({ apiUrl: thisFile.api.url, token: tokens.admin, jar: await hello('settings-service') });
    expect(answer).toEqual({ status: 409, body: expect.objectContaining({ code: 'SLUG_RESERVED' }) });
    await expectNothingDeployed('settings-service');
  });

  test('over MAX_JAR_BYTES -> 413 JAR_TOO_LARGE', async () => {
    const small = await thisFile.platform.startApi({
      config: { ...thisFile.platform.config, deploy: { ...thisFile.platform.config.deploy, maxJarBytes: 16 * 1024 } },
    });
    const jar = await buildJar({
      mainClass: 'HelloServer',
      entries: { 'application.properties': 'spring.application.name=big-service\n', 'data.bin': crypto.randomBytes(64 * 1024) },
    });
    const answer = await postJar({ apiUrl: small.url, token: tokens.admin, jar });
    expect(answer).toEqual({ status: 413, body: expect.objectContaining({ code: 'JAR_TOO_LARGE' }) });
    await expectNothingDeployed('big-service');
  });

  test('the Docker engine not answering -> 503 DOCKER_UNAVAILABLE, naming the fix', async () => {
    const noDocker = await thisFile.platform.startApi({ docker: createDocker({ dockerHost: 'unix:///nonexistent/docker.sock' }) });
    const answer = await postJar({ apiUrl: noDocker.url, token: tokens.admin, jar: await hello('lonely-service') });
    expect(answer).toEqual({
      status: 503,
      body: expect.objectContaining({ code: 'DOCKER_UNAVAILABLE', detail: expect.stringContaining('apt-get install docker.io') }),
    });
    await expectNothingDeployed('lonely-service');
  });

  test('a JAR whose base image is to be built from Debian packages on a machine without debootstrap -> 503 BASE_IMAGE_UNAVAILABLE naming the fix, and /readyz says so', async () => {
    const buildsItsImage = await thisFile.platform.startApi({
      config: {
        ...thisFile.platform.config,
        deploy: { ...thisFile.platform.config.deploy, baseImageBuild: 'debian', baseImage: `opsflow/jre-never-built:${process.pid}` },
      },
    });
    const jar = await hello('imageless-service');
    const path = process.env.PATH;
    // This process's PATH is where the API looks debootstrap up: a machine without it.
    process.env.PATH = '/nonexistent';
    try {
      const answer = await postJar({ apiUrl: buildsItsImage.url, token: tokens.admin, jar });
      expect(answer).toEqual({
        status: 503,
        body: expect.objectContaining({ code: 'BASE_IMAGE_UNAVAILABLE', detail: expect.stringContaining('apt-get install debootstrap') }),
      });
      await expectNothingDeployed('imageless-service');
      const ready = await call(buildsItsImage.url, 'GET', '/readyz');
      expect(ready.body.checks.jarBaseImage).toEqual(expect.stringMatching(/^unavailable: .*apt-get install debootstrap/));
    } finally {
      process.env.PATH = path;
    }
  });

  test('a user without ADMIN -> 403, and no token -> 401', async () => {
    const editor = await thisFile.platform.token({ sub: 'eve', roles: ['EDITOR'], sites: ['s1'] });
    expect((await postJar({ apiUrl: thisFile.api.url, token: editor, jar: await hello('edited-service') })).status).toBe(403);
    expectProblem(await call(thisFile.api.url, 'POST', '/api/infra/deploy', { body: { name: 'x-service', image: 'a/b:1', port: 80 } }), 401, 'UNAUTHENTICATED');
  });
});

test('a duplicate name -> 409 SERVICE_EXISTS and a taken slug -> 409 SLUG_TAKEN; the running service is untouched', async () => {
  const first = await postJar({ apiUrl: thisFile.api.url, token: tokens.admin, jar: await hello('dup-service') });
  expect(first.status).toBe(202);
  const again = await postJar({ apiUrl: thisFile.api.url, token: tokens.admin, jar: await hello('dup-service') });
  expect(again).toEqual({ status: 409, body: expect.objectContaining({ code: expect.stringMatching(/^(SERVICE_EXISTS|DEPLOYMENT_IN_PROGRESS)$/) }) });
  await expectRunning(first.body);

  const duplicate = await postJar({ apiUrl: thisFile.api.url, token: tokens.admin, jar: await hello('dup-service') });
  expect(duplicate).toEqual({ status: 409, body: expect.objectContaining({ code: 'SERVICE_EXISTS' }) });
  const slugTaken = await postJar({ apiUrl: thisFile.api.url, token: tokens.admin, jar: await hello('dup') });
  expect(slugTaken).toEqual({ status: 409, body: expect.objectContaining({ code: 'SLUG_TAKEN' }) });
  await expectNothingDeployed('dup');
  expect(await thisFile.platform.db('infra.deployment').where({ service_name: 'dup-service' })).toHaveLength(1);
  expect(await containersOf(thisFile.platform.docker.docker, scope(), 'dup-service')).toHaveLength(1);
});

test('an image deploy body with privileged, binds or networkMode -> 400, nothing deployed', async () => {
  for (const extra of [{ privileged: true }, { binds: ['/:/host'] }, { networkMode: 'host' }]) {
    const answer = await deployImage({ name: 'sneaky-service', image: 'opsflow/jre:17', port: 8080, ...extra });
    expectProblem(answer, 400, 'VALIDATION_FAILED');
    expect(answer.body.errors).toEqual([expect.objectContaining({ message: 'is not a known field' })]);
  }
  await expectNothingDeployed('sneaky-service');
});

test('a hostPort below 1024 -> 400 naming the field, unless DEPLOY_ALLOW_LOW_HOST_PORTS; nothing deployed', async () => {
  const answer = await deployImage({ name: 'low-port-service', image: 'opsflow/jre:17', port: 8080, hostPort: 80 });
  expectProblem(answer, 400, 'VALIDATION_FAILED');
  expect(answer.body.errors).toEqual([expect.objectContaining({ path: 'body.hostPort' })]);
  await expectNothingDeployed('low-port-service');
});

test('a JAR whose process exits at start: FAILED at HEALTH_CHECK with the reason and last log lines, nothing left behind, every undo step done', async () => {
  const jar = await buildJar({ mainClass: 'ExitAtStart', entries: { 'application.properties': 'spring.application.name=crashing-service\n' } });
  const accepted = await postJar({ apiUrl: thisFile.api.url, token: tokens.admin, jar });
  expect(accepted.status).toBe(202);
  const outcome = await deploymentOutcome(thisFile.api.url, tokens.admin, accepted.body.deploymentId);
  expect(outcome).toEqual(expect.objectContaining({ status: 'FAILED', stage: 'FAILED' }));
  expect(outcome.error).toEqual({
    stage: 'HEALTH_CHECK',
    reason: expect.stringContaining('exited with code 3'),
    lastLogLines: expect.arrayContaining(['fatal: no database configured, giving up']),
  });
  expect(outcome.events.map((event: any) => event.stage)).toEqual(['VALIDATED', 'BUILDING_IMAGE', 'STARTING', 'HEALTH_CHECK', 'FAILED']);
  expect(await thisFile.platform.db('infra.service').where({ name: 'crashing-service' })).toEqual([]);
  expect(await containersOf(thisFile.platform.docker.docker, scope(), 'crashing-service')).toEqual([]);
  expect(await imagesOf(thisFile.platform.docker.docker, scope(), 'crashing-service')).toEqual([]);
  await expectNoNetworkLeft('crashing-service');
  expect(await undoFailuresOf(thisFile.platform.temporal, accepted.body.workflowId)).toEqual([]);
  expectProblem(await call(thisFile.api.url, 'GET', '/api/crashing/x', { token: tokens.admin }), 404, 'NOT_FOUND');
});

test('a JAR that never answers its health check: FAILED when the deadline passes, with its log lines, nothing left behind, every undo step done', async () => {
  const jar = await buildJar({ mainClass: 'NeverHealthy', entries: { 'application.properties': 'spring.application.name=silent-service\n' } });
  const accepted = await postJar({ apiUrl: thisFile.api.url, token: tokens.admin, jar });
  const outcome = await deploymentOutcome(thisFile.api.url, tokens.admin, accepted.body.deploymentId);
  expect(outcome.status).toBe('FAILED');
  expect(outcome.error).toEqual({
    stage: 'HEALTH_CHECK',
    reason: expect.stringContaining('did not pass before the deadline'),
    lastLogLines: ['warming up forever'],
  });
  expect(await thisFile.platform.db('infra.service').where({ name: 'silent-service' })).toEqual([]);
  expect(await containersOf(thisFile.platform.docker.docker, scope(), 'silent-service')).toEqual([]);
  expect(await imagesOf(thisFile.platform.docker.docker, scope(), 'silent-service')).toEqual([]);
  await expectNoNetworkLeft('silent-service');
  expect(await undoFailuresOf(thisFile.platform.temporal, accepted.body.workflowId)).toEqual([]);
});
