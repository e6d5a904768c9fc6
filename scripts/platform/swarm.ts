import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Docker from 'dockerode';
import { spawnLogged } from './children';

/**
 * What the swarm driver needs on one machine: a swarm, a registry its nodes pull from, and for an edge that
 * runs on the host (npm start, the tests) a door into the services' overlays. In compose the edge is a
 * container and joins each overlay itself (DEPLOY_ATTACH_CONTAINERS); none of this is used there.
 */

/** The overlays' address pool: one /24 per service overlay, all behind one host route through the door. */
export const SWARM_ADDRESS_POOL = '10.240.0.0/16';

export interface RunningRegistry {
  address: string;
  stop(): Promise<void>;
}

/** Starts Debian's docker-registry (the reference registry) on loopback, storing into `dir`; deletes allowed, so old images can be pruned. */
export async function startRegistry(args: { port: number; dir: string; logFile?: string }): Promise<RunningRegistry> {
  fs.mkdirSync(args.dir, { recursive: true });
  const config = path.join(args.dir, 'config.yml');
  fs.writeFileSync(
    config,
    [
      'version: 0.1',
      'log: { level: warn }',
      'storage:',
      `  filesystem: { rootdirectory: ${JSON.stringify(path.join(args.dir, 'data'))} }`,
      '  delete: { enabled: true }',
      `http: { addr: "127.0.0.1:${args.port}" }`,
      '',
    ].join('\n'),
  );
  const { child, exit, stop } = spawnLogged('docker-registry', ['serve', config], args.logFile);
  const address = `127.0.0.1:${args.port}`;
  const started = Date.now();
  for (;;) {
    if (exit() !== null) throw new Error(`the registry (docker-registry) exited while starting: ${exit()}; is Debian's docker-registry installed?`);
    if (
      await fetch(`http://${address}/v2/`).then(
        (answer) => answer.ok,
        () => false,
      )
    )
      break;
    if (Date.now() - started > 20000) {
      child.kill('SIGKILL');
      throw new Error(`the registry (docker-registry) did not answer on ${address} within 20 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    address,
    stop,
  };
}

/** What the swarm's address is read from: the engine's default bridge network, as `docker network inspect bridge` shows it. */
export interface DefaultBridge {
  IPAM?: { Config?: Array<{ Gateway?: string }> | null };
  Options?: Record<string, string> | null;
}

/**
 * The address the swarm advertises: SWARM_ADVERTISE_ADDR when set; else the engine's default bridge gateway
 * (172.17.0.1), an address of this host that a second engine can reach through its own link, where loopback
 * would be its own. Some engines (Debian's dockerd 20.10) list no gateway in the bridge's IPAM config: then
 * the bridge interface's own IPv4 address, which is that gateway.
 */
/**
 * The IPv4 addresses of one network interface, whatever its state. Not os.networkInterfaces(): it leaves out
 * an interface that is not running, and the engine's bridge with no container on it has no carrier.
 */
export function interfaceIPv4Addresses(interfaceName: string): string[] {
  try {
    const shown = JSON.parse(execFileSync('ip', ['-j', '-4', 'addr', 'show', 'dev', interfaceName], { stdio: 'pipe' }).toString() || '[]') as Array<{
      addr_info?: Array<{ local?: string }>;
    }>;
    return shown.flatMap((entry) => entry.addr_info ?? []).flatMap((info) => (info.local ? [info.local] : []));
  } catch {
    return []; // no such interface
  }
}

export async function swarmAdvertiseAddress(
  docker: Docker,
  args: { configured: string | null; bridge?: () => Promise<DefaultBridge>; addressesOf?: (interfaceName: string) => string[] },
): Promise<string> {
  if (args.configured) return args.configured;
  const bridge = await (args.bridge ?? (() => docker.getNetwork('bridge').inspect() as Promise<DefaultBridge>))();
  const gateway = bridge.IPAM?.Config?.find((config) => config.Gateway)?.Gateway;
  if (gateway) return gateway;
  const name = bridge.Options?.['com.docker.network.bridge.name'] || 'docker0';
  const address = (args.addressesOf ?? interfaceIPv4Addresses)(name)[0];
  if (address) return address;
  throw new Error(
    `the engine's default bridge lists no gateway and its interface ${name} has no IPv4 address to advertise the swarm on: set SWARM_ADVERTISE_ADDR`,
  );
}

/**
 * Makes the engine a swarm manager advertising `advertiseAddress`, its overlays drawn from
 * SWARM_ADDRESS_POOL. A swarm the engine is already in is used when it matches; one that does not is left
 * and made again only while it runs no service, and otherwise this says so rather than take it down.
 */
export async function ensureSwarm(docker: Docker, args: { advertiseAddress: string }): Promise<void> {
  const info = (await docker.info()) as { Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean; NodeAddr?: string; Nodes?: number } };
  if (info.Swarm?.LocalNodeState === 'active') {
    if (!info.Swarm.ControlAvailable) throw new Error('the Docker engine is in a swarm but not a manager: the swarm driver deploys through a manager');
    const pools = ((await docker.swarmInspect()) as { DefaultAddrPool?: string[] }).DefaultAddrPool ?? [];
    if (pools.includes(SWARM_ADDRESS_POOL) && info.Swarm.NodeAddr === args.advertiseAddress) return;
    const services = await docker.listServices();
    if (services.length > 0 || (info.Swarm.Nodes ?? 1) > 1) {
      throw new Error(
        `the engine's swarm advertises ${info.Swarm.NodeAddr} and draws overlays from ${pools.join(', ') || 'its default pool'}, not ${args.advertiseAddress} and ${SWARM_ADDRESS_POOL}, and it runs services or has other nodes; leave it (docker swarm leave --force) or run the edge in a container`,
      );
    }
    await docker.swarmLeave({ force: true });
  }
  await docker.swarmInit({
    ListenAddr: `${args.advertiseAddress}:2377`,
    AdvertiseAddr: args.advertiseAddress,
    DefaultAddrPool: [SWARM_ADDRESS_POOL],
    SubnetSize: 24,
  });
}

/**
 * The door's container, running. A stopped door keeps its endpoints on the overlays it had joined; once one of
 * those is gone (its service removed while the engine was down), the engine refuses to start it (a CI run
 * failed so). The door holds no state of its own: it is made again and rejoins the overlays that still exist.
 */
export async function startEdgeDoorContainer(docker: Docker, args: { name: string; image: string }): Promise<Docker.Container> {
  let container = docker.getContainer(args.name);
  const existing = await container.inspect().catch(() => null);
  const createDoor = () =>
    docker.createContainer({
      name: args.name,
      Image: args.image,
      Cmd: ['sleep', 'infinity'],
      HostConfig: { NetworkMode: 'bridge', RestartPolicy: { Name: 'unless-stopped' }, CapDrop: ['ALL'], SecurityOpt: ['no-new-privileges:true'] },
    });
  if (!existing) {
    container = await createDoor();
    await container.start();
  } else if (!existing.State.Running) {
    try {
      await container.start();
    } catch {
      const joined = Object.keys(existing.NetworkSettings.Networks ?? {}).filter((network) => network !== 'bridge');
      await container.remove({ force: true });
      container = await createDoor();
      await container.start();
      for (const network of joined) {
        await docker
          .getNetwork(network)
          .connect({ Container: args.name })
          .catch((error: { statusCode?: number; message?: string }) => {
            // Gone too (the engine says 404, or 500 "…not found" for a swarm network): nothing to rejoin.
            if (error.statusCode !== 404 && !/not found/i.test(error.message ?? '')) throw error;
          });
      }
    }
  }
  return container;
}

/**
 * A host process cannot reach a swarm overlay: the overlay lives in namespaces of its own on each node.
 * The door is a container on the default bridge that the platform joins to every service overlay
 * (DEPLOY_ATTACH_CONTAINERS). The host routes the overlays' pool through it, and it forwards and
 * masquerades, so a task on any node answers the door's own overlay address, which the swarm knows.
 * Needs root (a host route, and the door's namespace set up from the host: the container gets no capability).
 */
export async function openEdgeDoor(docker: Docker, args: { name: string; image: string }): Promise<void> {
  const container = await startEdgeDoorContainer(docker, args);
  const details = await container.inspect();
  const pid = String(details.State.Pid);
  const doorAddress = details.NetworkSettings.Networks.bridge?.IPAddress;
  const hostAddress = details.NetworkSettings.Networks.bridge?.Gateway;
  if (!doorAddress || !hostAddress) throw new Error(`the edge door ${args.name} has no address on the default bridge`);
  const inDoor = (...command: string[]) => execFileSync('nsenter', ['-t', pid, '-n', ...command], { stdio: 'pipe' });
  const ensureRule = (table: string, rule: string[]) => {
    try {
      inDoor('iptables', '-t', table, '-C', ...rule);
    } catch {
      inDoor('iptables', '-t', table, '-A', ...rule);
    }
  };
  try {
    // The door forwards for the host alone: a neighbour container on the default bridge, which the host would
    // route here too, must not reach a service's port past the edge.
    inDoor('iptables', '-P', 'FORWARD', 'DROP');
    ensureRule('filter', ['FORWARD', '-s', hostAddress, '-d', SWARM_ADDRESS_POOL, '-j', 'ACCEPT']);
    ensureRule('filter', ['FORWARD', '-m', 'conntrack', '--ctstate', 'ESTABLISHED,RELATED', '-j', 'ACCEPT']);
    ensureRule('nat', ['POSTROUTING', '-d', SWARM_ADDRESS_POOL, '-j', 'MASQUERADE']);
    inDoor('sysctl', '-q', '-w', 'net.ipv4.ip_forward=1');
    execFileSync('ip', ['route', 'replace', SWARM_ADDRESS_POOL, 'via', doorAddress], { stdio: 'pipe' });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(
      `the edge door into the swarm's overlays could not be opened (needs root, nsenter, iptables and ip): ${stderr || (error as Error).message}`,
      { cause: error },
    );
  }
}

/**
 * Closes what openEdgeDoor opened: the host's route to the overlays, and the door's container (its overlay
 * endpoints go with it). A stopped platform leaves no container of its own behind.
 */
export async function closeEdgeDoor(docker: Docker, name: string): Promise<void> {
  try {
    execFileSync('ip', ['route', 'del', SWARM_ADDRESS_POOL], { stdio: 'pipe' });
  } catch {
    // No route: nothing to take back.
  }
  await docker
    .getContainer(name)
    .remove({ force: true })
    .catch((error: { statusCode?: number }) => {
      if (error.statusCode !== 404) throw error;
    });
}
