import Docker from 'dockerode';
import { DefaultBridge, interfaceIPv4Addresses, swarmAdvertiseAddress } from '../../scripts/platform/swarm';

/**
 * The address `DEPLOY_DRIVER=swarm npm start` advertises the swarm on. Debian's dockerd 20.10 may list no
 * gateway in the default bridge's IPAM config (seen on this project's machines): the start must not stop there.
 */
const docker = new Docker();
const bridgeWith = (bridge: DefaultBridge) => () => Promise.resolve(bridge);
const interfaces: Record<string, string[]> = { docker0: ['172.17.0.1'], br0: ['10.9.0.1'] };
const addressesOf = (name: string) => interfaces[name] ?? [];

test('the bridge gateway the engine lists is advertised', async () => {
  const bridge = bridgeWith({ IPAM: { Config: [{ Gateway: '172.18.0.1' }] }, Options: { 'com.docker.network.bridge.name': 'docker0' } });
  expect(await swarmAdvertiseAddress(docker, { configured: null, bridge, addressesOf })).toBe('172.18.0.1');
});

test("a bridge that lists no gateway: the bridge interface's own IPv4 address, by the name the engine gives it", async () => {
  expect(await swarmAdvertiseAddress(docker, { configured: null, bridge: bridgeWith({ IPAM: { Config: [{}] }, Options: null }), addressesOf })).toBe(
    '172.17.0.1',
  );
  expect(
    await swarmAdvertiseAddress(docker, {
      configured: null,
      bridge: bridgeWith({ IPAM: { Config: null }, Options: { 'com.docker.network.bridge.name': 'br0' } }),
      addressesOf,
    }),
  ).toBe('10.9.0.1');
});

test('SWARM_ADVERTISE_ADDR wins; no gateway and no interface address is an error that names it', async () => {
  expect(await swarmAdvertiseAddress(docker, { configured: '192.0.2.7', bridge: bridgeWith({}), addressesOf })).toBe('192.0.2.7');
  await expect(
    swarmAdvertiseAddress(docker, { configured: null, bridge: bridgeWith({ Options: { 'com.docker.network.bridge.name': 'gone0' } }), addressesOf }),
  ).rejects.toThrow('set SWARM_ADVERTISE_ADDR');
});

test("on this machine's engine: an address of this host's bridge, whether or not the engine lists its gateway or the bridge has a carrier", async () => {
  const bridge = (await docker.getNetwork('bridge').inspect()) as DefaultBridge;
  const name = bridge.Options?.['com.docker.network.bridge.name'] || 'docker0';
  // A bridge with no container on it has no carrier; Node's own interface list leaves it out (a CI run failed so).
  const own = interfaceIPv4Addresses(name);
  expect(own.length).toBeGreaterThan(0);
  expect(own).toContain(await swarmAdvertiseAddress(docker, { configured: null }));
  const noGateway = { ...bridge, IPAM: { Config: [{}] } };
  expect(own).toContain(await swarmAdvertiseAddress(docker, { configured: null, bridge: () => Promise.resolve(noGateway) }));
});
