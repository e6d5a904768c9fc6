import { createDocker } from '../../adapters/docker';
import { ensureServiceNetwork, removeServiceNetwork, serviceNetworkName } from '../../activities/deploy/service-network';

/**
 * A service's own network, joined by the containers DEPLOY_ATTACH_CONTAINERS names: exact names, and with a
 * trailing `*` every container whose name starts with the rest (compose's replicas of the deploy worker,
 * `opsflow-deploy-worker-1`, `-2`, …). A neighbour container with another name never joins.
 */
const docker = createDocker({ dockerHost: process.env.DOCKER_HOST ?? null }).docker;
const scope = `opsflow-attach-${process.pid}`;
const names = [`${scope}-worker-1`, `${scope}-worker-2`, `${scope}-edge`, `${scope}-neighbour`];

beforeAll(async () => {
  for (const name of names) {
    const container = await docker.createContainer({ name, Image: 'opsflow/jre:17', Cmd: ['sleep', '300'], Labels: { 'opsflow.scope': scope } });
    await container.start();
  }
});

afterAll(async () => {
  for (const name of names)
    await docker
      .getContainer(name)
      .remove({ force: true })
      .catch(() => undefined);
  await docker
    .getNetwork(serviceNetworkName({ network: scope, serviceName: 'svc' }))
    .remove()
    .catch(() => undefined);
});

const attachedTo = async (network: string) =>
  Object.values((await docker.getNetwork(network).inspect()).Containers ?? {})
    .map((container) => (container as { Name: string }).Name)
    .sort();

test('a name joins as it is, a prefix* joins every replica it names, a neighbour does not; removal takes them all off and deletes the network', async () => {
  const attach = [`${scope}-edge`, `${scope}-worker-*`];
  const network = await ensureServiceNetwork(docker, { network: scope, serviceName: 'svc', scope, attach });
  expect(await attachedTo(network)).toEqual([`${scope}-edge`, `${scope}-worker-1`, `${scope}-worker-2`]);
  // Idempotent: a second deploy of the service finds them attached.
  await ensureServiceNetwork(docker, { network: scope, serviceName: 'svc', scope, attach });
  expect(await attachedTo(network)).toHaveLength(3);
  await removeServiceNetwork(docker, { network: scope, serviceName: 'svc', attach });
  await expect(docker.getNetwork(network).inspect()).rejects.toMatchObject({ statusCode: 404 });
});
