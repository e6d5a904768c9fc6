import os from 'node:os';
import Docker from 'dockerode';
import { DefaultBridge, swarmAdvertiseAddress } from '../../scripts/platform/swarm';

/**
 * The address `DEPLOY_DRIVER=swarm npm start` advertises the swarm on. Debian's dockerd 20.10 may list no
 * gateway in the default bridge's IPAM config (seen on this project's machines): the start must not stop there.
 */
const docker = new Docker();
const bridgeWith = (bridge: DefaultBridge) => () => Promise.resolve(bridge);
const interfaces = (): NodeJS.Dict<os.NetworkInterfaceInfo[]> => ({
  docker0: [{ address: '172.17.0.1', netmask: '255.255.0.0', family: 'IPv4', mac: '02:42:00:00:00:01', internal: false, cidr: '172.17.0.1/16' }],
  br0: [{ address: '10.9.0.1', netmask: '255.255.255.0', family: 'IPv4', mac: '02:42:00:00:00:02', internal: false, cidr: '10.9.0.1/24' }],
});

test('the bridge gateway the engine lists is advertised', async () => {
  const bridge = bridgeWith({ IPAM: { Config: [{ Gateway: '172.18.0.1' }] }, Options: { 'com.docker.network.bridge.name': 'docker0' } });
  expect(await swarmAdvertiseAddress(docker, { configured: null, bridge, interfaces })).toBe('172.18.0.1');
});

test("a bridge that lists no gateway: the bridge interface's own IPv4 address, by the name the engine gives it", async () => {
  expect(await swarmAdvertiseAddress(docker, { configured: null, bridge: bridgeWith({ IPAM: { Config: [{}] }, Options: null }), interfaces })).toBe('172.17.0.1');
  expect(await swarmAdvertiseAddress(docker, { configured: null, bridge: bridgeWith({ IPAM: { Config: null }, Options: { 'com.docker.network.bridge.name': 'br0' } }), interfaces })).toBe('10.9.0.1');
});

test('SWARM_ADVERTISE_ADDR wins; no gateway and no interface address is an error that names it', async () => {
  expect(await swarmAdvertiseAddress(docker, { configured: '192.0.2.7', bridge: bridgeWith({}), interfaces })).toBe('192.0.2.7');
  await expect(swarmAdvertiseAddress(docker, { configured: null, bridge: bridgeWith({ Options: { 'com.docker.network.bridge.name': 'gone0' } }), interfaces })).rejects.toThrow('set SWARM_ADVERTISE_ADDR');
});

test("on this machine's engine: an address of this host's bridge, whether or not the engine lists its gateway", async () => {
  const bridge = (await docker.getNetwork('bridge').inspect()) as DefaultBridge;
  const name = bridge.Options?.['com.docker.network.bridge.name'] || 'docker0';
  const own = (os.networkInterfaces()[name] ?? []).filter((entry) => entry.family === 'IPv4').map((entry) => entry.address);
  expect(own).toContain(await swarmAdvertiseAddress(docker, { configured: null }));
});
