import { ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../../temporal-config/temporal-cli';
import { adminIdentityDirOf, loadOrCreateSigningKey } from '../../temporal-config/service-identity';
import { clientTlsOf, ensureTemporalTls } from '../../temporal-config/server-certificates';
import { TOOLS_ENVOY, envoyProblem } from '../envoy';
import { TemporalServerBinaries } from '../temporal-server';
import { ensureClusterNamespaces } from './temporal-namespaces';
import { askUntil, pauseMs } from '../../lib/poll-until';
import { stopChild } from './children';
import { ClusterNode, clusterNode, exitOf, NodeContext, NodeKeys, NodePorts, pickNodePorts, SqlEndpoint } from './temporal-cluster-node';

export type { ClusterNode, SqlEndpoint } from './temporal-cluster-node';
export { SERVER_CONFIG_TEMPLATE, SERVER_DYNAMIC_CONFIG } from './temporal-cluster-node';

const execFileAsync = promisify(execFile);

export const DOOR_CONFIG = path.join(PROJECT_ROOT, 'temporal-config', 'door.yaml');

interface SocketAddress {
  socket_address: { address: string; port_value: number };
}

/** The parts of the door's Envoy bootstrap that differ between compose and a cluster on loopback. */
interface DoorBootstrap {
  admin: { address: SocketAddress };
  static_resources: {
    listeners: Array<{ address: SocketAddress }>;
    clusters: Array<{ type: string; load_assignment: { endpoints: Array<{ lb_endpoints: Array<{ endpoint: { address: SocketAddress } }> }> } }>;
  };
}

/**
 * Ports a node's membership uses are kept in a smallint column of `cluster_membership`: below 32768, so
 * never from the kernel's ephemeral range. Every port of a node is picked from this range.
 */
export interface RunningTemporalCluster {
  /** The one address in front of every frontend (Envoy), which survives the loss of any one node. */
  address: string;
  nodes: ClusterNode[];
  /** The folder of the workload key the nodes trust, capped (TEMPORAL_IDENTITY_DIR for the platform's processes). */
  identityDir: string;
  /** The folder of the administrator's key, the only one whose admin tokens the nodes take (the setup's). */
  adminIdentityDir: string;
  /** The authority clients verify the frontends against (TEMPORAL_TLS_CA_FILE). */
  tlsCaFile: string;
  /** The door's process: how it ended when it exits, and a restart on the same port. */
  door: { exited(): Promise<string>; restart(): Promise<void>; stop(): Promise<void> };
  stop(): Promise<void>;
}

/** Creates the two databases when missing and sets up or upgrades their schemas: idempotent, as the SQL tool is. */
export async function setUpTemporalDatabases(args: {
  binaries: TemporalServerBinaries;
  sql: SqlEndpoint;
  databases: { history: string; visibility: string };
  fresh?: boolean;
}): Promise<void> {
  const { binaries, sql } = args;
  const tool = (database: string, ...command: string[]) =>
    execFileAsync(binaries.sql, ['--plugin', 'postgres12', '--ep', sql.host, '-p', String(sql.port), '-u', sql.user, '--db', database, ...command], {
      // The password goes by the environment, not the command line another user's `ps` shows; and nothing
      // else of this process's environment (the platform's own secrets) goes with it.
      env: { PATH: process.env.PATH, SQL_PASSWORD: sql.password },
      timeout: 120000,
    });
  for (const [database, schema] of [
    [args.databases.history, 'temporal'],
    [args.databases.visibility, 'visibility'],
  ] as const) {
    if (args.fresh) await tool(database, 'drop-database', '--force');
    await tool(database, 'create-database').catch((error: { stderr?: string }) => {
      if (!/already exists/.test(error.stderr ?? '')) throw error;
    });
    await tool(database, 'setup-schema', '-v', '0.0');
    await tool(database, 'update-schema', '-d', path.join(binaries.schemaDir, schema, 'versioned'));
  }
}

/**
 * The door: Envoy, a TCP proxy in front of every node's frontend, health-checked each second, so that the
 * platform's one address reaches a live node when another is lost. Answers its address once it listens.
 */
async function startDoor(args: { port: number; frontends: number[]; dir: string }): Promise<{ address: string; process: ChildProcess }> {
  const problem = envoyProblem();
  if (problem) throw new Error(problem);
  // The door of docker-compose.yml (temporal-config/door.yaml), on loopback: this cluster's frontends, a
  // port of its own, and its admin on a free port.
  const bootstrap = parse(fs.readFileSync(DOOR_CONFIG, 'utf8')) as DoorBootstrap;
  bootstrap.admin.address.socket_address = { address: '127.0.0.1', port_value: 0 };
  bootstrap.static_resources.listeners[0].address.socket_address = { address: '127.0.0.1', port_value: args.port };
  const frontends = bootstrap.static_resources.clusters[0];
  frontends.type = 'STATIC';
  frontends.load_assignment.endpoints = [
    { lb_endpoints: args.frontends.map((port) => ({ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } })) },
  ];
  const file = path.join(args.dir, 'door.json');
  fs.writeFileSync(file, JSON.stringify(bootstrap));
  const adminFile = path.join(args.dir, 'door-admin.txt');
  fs.rmSync(adminFile, { force: true });
  const log = fs.openSync(path.join(args.dir, 'door.log'), 'a');
  const child = spawn(TOOLS_ENVOY, ['-c', file, '--concurrency', '1', '--disable-hot-restart', '--log-level', 'warn', '--admin-address-path', adminFile], {
    stdio: ['ignore', log, log],
  });
  fs.closeSync(log);
  const deadline = Date.now() + 20000;
  return askUntil(async () => {
    if (child.exitCode !== null) throw new Error(`the Temporal door (Envoy) exited while starting: see ${path.join(args.dir, 'door.log')}`);
    if (fs.existsSync(adminFile) && fs.readFileSync(adminFile, 'utf8').trim()) {
      const admin = fs.readFileSync(adminFile, 'utf8').trim();
      const listeners = await fetch(`http://${admin}/listeners?format=json`).then(
        (answer) => answer.json() as Promise<{ listener_statuses?: Array<{ local_address?: { socket_address?: { port_value?: number } } }> }>,
        () => null,
      );
      const port = listeners?.listener_statuses?.[0]?.local_address?.socket_address?.port_value;
      if (port) return { address: `127.0.0.1:${port}`, process: child };
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error('the Temporal door (Envoy) did not listen within 20 s');
    }
    return undefined;
  }, pauseMs(100));
}

/**
 * A Temporal cluster of `nodes` server processes (each with every service) on PostgreSQL, behind one door.
 * The databases are set up first; the first node starts alone (it initialises the cluster's metadata),
 * the others join it. The namespaces are registered with the platform's search attributes.
 */
export async function startTemporalCluster(args: {
  binaries: TemporalServerBinaries;
  sql: SqlEndpoint;
  databases?: { history: string; visibility: string };
  namespaces: string[];
  /** Where the nodes' logs and the door's files go. */
  dir: string;
  nodes?: number;
  /** The door's port; 0 picks a free one. */
  port?: number;
  /** Drops the databases first: a test's cluster starts empty. */
  fresh?: boolean;
  /** The platform's signing key for its service tokens (TEMPORAL_IDENTITY_DIR): its JWKS is what the nodes trust. */
  identityDir: string;
  /** The administrator's key (TEMPORAL_ADMIN_IDENTITY_DIR); by default a folder inside identityDir. */
  adminIdentityDir?: string;
  /** The organisation's identity provider for operators: its JWKS and the one issuer taken from it. */
  operator?: { jwksUri: string; issuer: string };
  /** The namespaces the workload key may write (`prefix*` for all that begin so); by default `namespaces`. */
  workloadNamespaces?: string[];
  say?: (line: string) => void;
}): Promise<RunningTemporalCluster> {
  const say = args.say ?? (() => undefined);
  const databases = args.databases ?? { history: 'temporal', visibility: 'temporal_visibility' };
  fs.mkdirSync(args.dir, { recursive: true });
  await setUpTemporalDatabases({ binaries: args.binaries, sql: args.sql, databases, fresh: args.fresh });
  const adminIdentityDir = adminIdentityDirOf(args.identityDir, args.adminIdentityDir);
  const keys: NodeKeys = {
    workloadJwksFile: loadOrCreateSigningKey(args.identityDir).jwksFile,
    adminJwksFile: loadOrCreateSigningKey(adminIdentityDir).jwksFile,
    operator: args.operator,
    workloadNamespaces: args.workloadNamespaces ?? args.namespaces,
  };
  // TLS always: without it the internal frontend (no token check, for the server's own workers) would take
  // any caller who reaches it.
  const tls = ensureTemporalTls(path.join(args.identityDir, 'tls'));
  const clientTls = clientTlsOf(tls.caFile) ?? false;
  const ports: NodePorts[] = [];
  for (let i = 0; i < (args.nodes ?? 2); i++) ports.push(await pickNodePorts());
  const door = await startDoor({ port: args.port ?? 0, frontends: ports.map((node) => node.frontend), dir: args.dir });
  const doorPort = Number(door.address.split(':')[1]);
  let doorProcess = door.process;
  const context: NodeContext = {
    binaries: args.binaries,
    sql: args.sql,
    databases,
    keys,
    tlsDir: tls.dir,
    clientTls,
    clusterAddress: door.address,
    dir: args.dir,
    ports,
    say,
    restartDoor: () => doorControl.restart(),
  };
  const nodes: ClusterNode[] = ports.map((_, index) => clusterNode(context, index));
  const stop = async () => {
    for (const node of nodes) await node.stop();
    await doorControl.stop();
  };
  const doorControl = {
    exited: () => exitOf(doorProcess),
    restart: async () => {
      await stopChild(doorProcess, 15000);
      doorProcess = (await startDoor({ port: doorPort, frontends: ports.map((node) => node.frontend), dir: args.dir })).process;
    },
    stop: () => stopChild(doorProcess, 15000),
  };
  try {
    for (const node of nodes) await node.start();
    await ensureClusterNamespaces({ address: door.address, nodes, adminIdentityDir, tlsCaFile: tls.caFile }, args.namespaces);
  } catch (error) {
    await stop();
    throw error;
  }
  return { address: door.address, nodes, door: doorControl, identityDir: args.identityDir, adminIdentityDir, tlsCaFile: tls.caFile, stop };
}
