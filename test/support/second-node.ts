import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { waitUntil, succeeds } from './wait';

/**
 * A second Docker engine on this machine, as a second swarm node: its own network namespace joined to the
 * host by a veth pair (10.250.0.1 on the host, 10.250.0.2 inside; openSecondNodeLink), its own data root,
 * exec root, socket and containerd namespace. It joins the host engine's swarm as a worker. A task on it pulls its image from the
 * platform's registry at the same `127.0.0.1:port` the manager pushed to: a forwarder inside its namespace
 * carries that port to the host. Needs root.
 */
export interface SecondNode {
  docker: Docker;
  nodeId: string;
  stop(): Promise<void>;
}

const NAMESPACE = 'opsflow-node2';
const HOST_LINK = 'opsflow-n2h';
const NODE_LINK = 'opsflow-n2c';
const HOST_ADDRESS = '10.250.0.1';
const NODE_ADDRESS = '10.250.0.2';

const run = (command: string, args: string[]) => execFileSync(command, args, { stdio: 'pipe' }).toString();
const quietly = (command: string, args: string[]) => {
  try {
    run(command, args);
  } catch {
    // already gone
  }
};

function removeLeftovers(): void {
  quietly('ip', ['netns', 'del', NAMESPACE]);
  quietly('ip', ['link', 'del', HOST_LINK]);
}

/**
 * The second node's link, made before the swarm: a network namespace and a veth pair, the host's end holding
 * 10.250.0.1. The swarm advertises that address, on the link itself, so that the overlay's packets to
 * the second node leave from the address it knows the manager by (a VXLAN packet from another source address
 * than its static entry says is dropped: VXLAN_ENTRY_EXISTS). Idempotent; the namespace stays empty until a
 * second engine starts in it.
 */
export function openSecondNodeLink(): string {
  const inNode = ['netns', 'exec', NAMESPACE];
  const exists = (() => {
    try {
      run('ip', ['link', 'show', HOST_LINK]);
      return true;
    } catch {
      return false;
    }
  })();
  if (exists) return HOST_ADDRESS;
  removeLeftovers();
  run('ip', ['netns', 'add', NAMESPACE]);
  run('ip', ['link', 'add', HOST_LINK, 'type', 'veth', 'peer', 'name', NODE_LINK]);
  run('ip', ['link', 'set', NODE_LINK, 'netns', NAMESPACE]);
  run('ip', ['addr', 'add', `${HOST_ADDRESS}/30`, 'dev', HOST_LINK]);
  run('ip', ['link', 'set', HOST_LINK, 'up']);
  run('ip', [...inNode, 'ip', 'addr', 'add', `${NODE_ADDRESS}/30`, 'dev', NODE_LINK]);
  run('ip', [...inNode, 'ip', 'link', 'set', NODE_LINK, 'up']);
  run('ip', [...inNode, 'ip', 'link', 'set', 'lo', 'up']);
  run('ip', [...inNode, 'ip', 'route', 'add', 'default', 'via', HOST_ADDRESS]);
  return HOST_ADDRESS;
}

export async function startSecondNode(args: { manager: Docker; baseImage: string; registry: string }): Promise<SecondNode> {
  openSecondNodeLink();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-node2-'));
  const socket = path.join(root, 'docker.sock');

  // `ip netns exec` would also give dockerd a private /sys without the host's cgroups: only the network is entered.
  const log = fs.openSync(path.join(root, 'dockerd.log'), 'a');
  const dockerd: ChildProcess = spawn(
    'nsenter',
    [
      `--net=/var/run/netns/${NAMESPACE}`,
      'dockerd',
      '--data-root',
      path.join(root, 'data'),
      '--exec-root',
      path.join(root, 'exec'),
      '--pidfile',
      path.join(root, 'dockerd.pid'),
      '-H',
      `unix://${socket}`,
      '--containerd-namespace',
      'opsflow-node2',
      '--containerd-plugins-namespace',
      'opsflow-node2-plugins',
      '--no-new-privileges',
      // Its own bridges (docker0, docker_gwbridge) from addresses of its own: with the engine's defaults one would
      // hold 172.17.0.1 inside its namespace, the address the manager advertises.
      '--bip',
      '172.30.0.1/24',
      '--default-address-pool',
      'base=172.29.0.0/16,size=24',
    ],
    { stdio: ['ignore', log, log] },
  );
  const docker = new Docker({ socketPath: socket });
  const forwarders: ChildProcess[] = [];
  const stop = async () => {
    await docker.swarmLeave({ force: true }).catch(() => undefined);
    for (const forwarder of forwarders) forwarder.kill('SIGTERM');
    dockerd.kill('SIGTERM');
    await new Promise((resolve) => (dockerd.exitCode === null ? dockerd.once('exit', resolve) : resolve(null)));
    fs.rmSync(root, { recursive: true, force: true });
  };
  try {
    await waitUntil('the second engine to answer', () => succeeds(docker.ping()), { timeoutMs: 30000 });
    // Both engines need the base image; a JAR image comes from the registry.
    execFileSync('sh', ['-c', `docker save ${args.baseImage} | docker -H unix://${socket} load -q`], { stdio: 'pipe' });

    // The registry's port, carried twice: the node's loopback to the host's end of the link, that to the registry.
    const [host, port] = args.registry.split(':');
    forwarders.push(spawn(process.execPath, ['-e', FORWARDER, HOST_ADDRESS, port, host], { stdio: 'ignore' }));
    forwarders.push(
      spawn('nsenter', [`--net=/var/run/netns/${NAMESPACE}`, process.execPath, '-e', FORWARDER, '127.0.0.1', port, HOST_ADDRESS], { stdio: 'ignore' }),
    );

    const swarm = (await args.manager.swarmInspect()) as { JoinTokens: { Worker: string } };
    const managerAddress = ((await args.manager.info()) as { Swarm: { NodeAddr: string } }).Swarm.NodeAddr;
    await docker.swarmJoin({
      ListenAddr: `${NODE_ADDRESS}:2377`,
      AdvertiseAddr: NODE_ADDRESS,
      RemoteAddrs: [`${managerAddress}:2377`],
      JoinToken: swarm.JoinTokens.Worker,
    });
    const info = (await docker.info()) as { Swarm: { NodeID: string } };
    await waitUntil('the second node ready in the swarm', async () => {
      const node = (await args.manager.getNode(info.Swarm.NodeID).inspect()) as { Status: { State: string } };
      return node.Status.State === 'ready';
    });
    return { docker, nodeId: info.Swarm.NodeID, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A TCP forwarder run as `node -e FORWARDER listenHost port targetHost`: one on the host, one inside the node. */
const FORWARDER = `
const net = require('node:net');
const [listenHost, port, targetHost] = process.argv.slice(1);
net.createServer((client) => {
  const upstream = net.connect(Number(port), targetHost);
  client.pipe(upstream).pipe(client);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
}).listen(Number(port), listenHost);
`;
