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
  for (const network of await docker.listNetworks({ filters: { label: [`opsflow.scope=${scope}`] } }))
    await docker
      .getNetwork(network.Id)
      .remove()
      .catch(() => undefined);
});

const attachedTo = async (network: string) =>
  Object.values((await docker.getNetwork(network).inspect()).Containers ?? {})
    .map((container) => (container as { Name: string }).Name)
    .sort();

test('a name joins as it is, a prefix* joins every replica it names, a neighbour does not; removal takes them all off and deletes the network', async () => {
  const attach = [`${scope}-edge`, `${scope}-worker-*`];
  const network = await ensureServiceNetwork(docker, { network: scope, serviceName: 'svc', scope, attach, subnetPool: '10.214.0.0/16' });
  expect(await attachedTo(network)).toEqual([`${scope}-edge`, `${scope}-worker-1`, `${scope}-worker-2`]);
  // Idempotent: a second deploy of the service finds them attached.
  await ensureServiceNetwork(docker, { network: scope, serviceName: 'svc', scope, attach, subnetPool: '10.214.0.0/16' });
  expect(await attachedTo(network)).toHaveLength(3);
  await removeServiceNetwork(docker, { network: scope, serviceName: 'svc', attach });
  await expect(docker.getNetwork(network).inspect()).rejects.toMatchObject({ statusCode: 404 });
});

/** Docker's default pools give each bridge a /16 or a /20: about 30 networks, where a platform runs hundreds of services. */
test("more services than the engine's default pools hold each get a network, in blocks of the pool that do not overlap", async () => {
  const subnetPool = '10.214.0.0/16';
  const services = Array.from({ length: 40 }, (_, i) => `many-${i}`);
  // Eight at a time, as deploys run side by side: two may pick a block at once, and one of them picks again.
  for (let i = 0; i < services.length; i += 8)
    await Promise.all(
      services.slice(i, i + 8).map((serviceName) => ensureServiceNetwork(docker, { network: scope, serviceName, scope, attach: [], subnetPool })),
    );
  const subnets = await Promise.all(
    services.map(async (serviceName) => {
      const inspected = await docker.getNetwork(serviceNetworkName({ network: scope, serviceName })).inspect();
      return (inspected.IPAM?.Config as Array<{ Subnet: string }>)[0].Subnet;
    }),
  );
  expect(subnets.every((subnet) => /^10\.214\.\d+\.\d+\/26$/.test(subnet))).toBe(true);
  expect(new Set(subnets).size).toBe(services.length);
});
