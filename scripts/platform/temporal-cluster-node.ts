import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../temporal-config/temporal-cli';
import { TemporalServerBinaries } from '../temporal-server';
import { askUntil, pauseMs } from '../../lib/poll-until';
import { freePort, stopChild, writtenFromNow } from './children';
import { frontendAnswers } from './temporal';

/**
 * One node of a Temporal cluster: a server process with every service, its ports, and how it starts again
 * on new ports when one was taken. `temporal-cluster.ts` puts the nodes behind one door.
 */

const NODE_PORTS_FROM = 20000;
const NODE_PORTS_TO = 32767;

export interface SqlEndpoint {
  host: string;
  port: number;
  user: string;
  password: string;
}

export interface ClusterNode {
  name: string;
  /** This node's own frontend, host:port. */
  frontend: string;
  /** Whether its process is running. */
  running(): boolean;
  /** Its current process id, while it runs. */
  pid(): number | null;
  /** Resolves, with how it ended, when its current process exits however it does. */
  exited(): Promise<string>;
  /** Stops it gracefully (SIGTERM, then SIGKILL after 15 s). */
  stop(): Promise<void>;
  /** kill -9, as a machine lost would. */
  kill(): Promise<void>;
  /** Starts it again on the same ports and databases, and answers once its frontend does. */
  start(): Promise<void>;
}

export interface NodePorts {
  frontend: number;
  frontendMembership: number;
  internalFrontend: number;
  internalFrontendMembership: number;
  history: number;
  historyMembership: number;
  matching: number;
  matchingMembership: number;
  worker: number;
  workerMembership: number;
}

export async function pickNodePorts(): Promise<NodePorts> {
  const names: Array<keyof NodePorts> = [
    'frontend',
    'frontendMembership',
    'internalFrontend',
    'internalFrontendMembership',
    'history',
    'historyMembership',
    'matching',
    'matchingMembership',
    'worker',
    'workerMembership',
  ];
  const ports = {} as NodePorts;
  for (const name of names) ports[name] = await freePort({ from: NODE_PORTS_FROM, to: NODE_PORTS_TO });
  return ports;
}

/** The JWKS files of each class of keys a node trusts, and the operators' provider when there is one. */
export interface NodeKeys {
  workloadJwksFile: string;
  adminJwksFile: string;
  operator?: { jwksUri: string; issuer: string };
  /** The namespaces the workload key may write: no other. */
  workloadNamespaces: string[];
}

/** Every service in each node; the internal frontend is the server's own way in past the token check. */
const NODE_SERVICES = ['frontend', 'internal-frontend', 'history', 'matching', 'worker'];

function startNode(args: {
  binaries: TemporalServerBinaries;
  sql: SqlEndpoint;
  databases: { history: string; visibility: string };
  ports: NodePorts;
  clusterAddress: string;
  keys: NodeKeys;
  tlsDir: string | null;
  logFile: string;
}): ChildProcess {
  const { ports, sql } = args;
  const out = fs.openSync(args.logFile, 'a');
  const child = spawn(args.binaries.server, ['--config-file', SERVER_CONFIG_TEMPLATE, 'start', ...NODE_SERVICES.flatMap((service) => ['--service', service])], {
    stdio: ['ignore', out, out],
    env: {
      PATH: process.env.PATH,
      TEMPORAL_SQL_HOST: sql.host,
      TEMPORAL_SQL_PORT: String(sql.port),
      TEMPORAL_SQL_USER: sql.user,
      TEMPORAL_SQL_PASSWORD: sql.password,
      TEMPORAL_DB: args.databases.history,
      TEMPORAL_VISIBILITY_DB: args.databases.visibility,
      TEMPORAL_CLUSTER_ADDRESS: args.clusterAddress,
      TEMPORAL_BIND_IP: '127.0.0.1',
      TEMPORAL_BROADCAST_ADDRESS: '127.0.0.1',
      TEMPORAL_FRONTEND_PORT: String(ports.frontend),
      TEMPORAL_FRONTEND_MEMBERSHIP_PORT: String(ports.frontendMembership),
      TEMPORAL_INTERNAL_FRONTEND_PORT: String(ports.internalFrontend),
      TEMPORAL_INTERNAL_FRONTEND_MEMBERSHIP_PORT: String(ports.internalFrontendMembership),
      // Each class of keys the claim mapper keeps apart (temporal-config/server/claim_mapper.go).
      TEMPORAL_JWKS_URI: `file://${args.keys.workloadJwksFile}`,
      TEMPORAL_ADMIN_JWKS_URI: `file://${args.keys.adminJwksFile}`,
      TEMPORAL_WORKLOAD_NAMESPACES: args.keys.workloadNamespaces.join(','),
      ...(args.keys.operator ? { TEMPORAL_OPERATOR_JWKS_URI: args.keys.operator.jwksUri, TEMPORAL_OPERATOR_ISSUER: args.keys.operator.issuer } : {}),
      ...(args.tlsDir ? { TEMPORAL_TLS_DIR: args.tlsDir } : {}),
      TEMPORAL_HISTORY_PORT: String(ports.history),
      TEMPORAL_HISTORY_MEMBERSHIP_PORT: String(ports.historyMembership),
      TEMPORAL_MATCHING_PORT: String(ports.matching),
      TEMPORAL_MATCHING_MEMBERSHIP_PORT: String(ports.matchingMembership),
      TEMPORAL_WORKER_PORT: String(ports.worker),
      TEMPORAL_WORKER_MEMBERSHIP_PORT: String(ports.workerMembership),
      TEMPORAL_DYNAMIC_CONFIG: SERVER_DYNAMIC_CONFIG,
    },
  });
  fs.closeSync(out);
  return child;
}

/** The server's configuration: one template for every node, here and in docker-compose.yml. */
export const SERVER_CONFIG_TEMPLATE = path.join(PROJECT_ROOT, 'temporal-config', 'server.yaml');

export const SERVER_DYNAMIC_CONFIG = path.join(PROJECT_ROOT, 'temporal-config', 'dynamicconfig', 'production.yaml');

/** A node's port was taken by another process between the pick and the node's bind. */
class PortTaken extends Error {
  constructor(node: string) {
    super(`a port of Temporal node ${node} was taken before it could bind it`);
    this.name = 'PortTaken';
  }
}

/** How it ended, once a child process exits however it does. */
export const exitOf = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve(`code ${child.exitCode} signal ${child.signalCode}`)
    : new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(`code ${code} signal ${signal}`)));

/** What every node of one cluster shares. `ports` is the cluster's list: a node that moves writes its new ports there. */
export interface NodeContext {
  binaries: TemporalServerBinaries;
  sql: SqlEndpoint;
  databases: { history: string; visibility: string };
  keys: NodeKeys;
  tlsDir: string | null;
  clientTls: Parameters<typeof frontendAnswers>[1];
  clusterAddress: string;
  dir: string;
  ports: NodePorts[];
  say: (line: string) => void;
  /** Tells the door of the nodes' frontends again, after one moved. */
  restartDoor: () => Promise<void>;
}

/**
 * Starts node `index` once and waits until its frontend answers; a port taken is PortTaken. `spawned` keeps
 * the process from the start, so that one that never answers can still be stopped.
 */
async function startNodeOnce(context: NodeContext, index: number, name: string, spawned: (child: ChildProcess) => void): Promise<void> {
  const logFile = path.join(context.dir, `${name}.log`);
  const said = writtenFromNow(logFile, 100000);
  const { binaries, sql, databases, clusterAddress, keys, tlsDir } = context;
  const child = startNode({ binaries, sql, databases, ports: context.ports[index], clusterAddress, keys, tlsDir, logFile });
  spawned(child);
  const frontend = `127.0.0.1:${context.ports[index].frontend}`;
  const deadline = Date.now() + 90000;
  await askUntil(async () => {
    if ((await frontendAnswers(frontend, context.clientTls)) === true) return true;
    if (child.exitCode !== null || child.signalCode !== null) {
      throw /address already in use/.test(said()) ? new PortTaken(name) : new Error(`Temporal node ${name} exited while starting: see ${logFile}`);
    }
    if (Date.now() > deadline) throw new Error(`Temporal node ${name} did not answer on ${frontend} within 90 s: see ${logFile}`);
    return undefined;
  }, pauseMs(250));
}

/** Node `index` of the cluster: not started yet. */
export function clusterNode(context: NodeContext, index: number): ClusterNode {
  const name = `temporal-${index + 1}`;
  const frontend = () => `127.0.0.1:${context.ports[index].frontend}`;
  let child: ChildProcess | null = null;
  const running = () => child !== null && child.exitCode === null && child.signalCode === null;
  return {
    name,
    get frontend() {
      return frontend();
    },
    running,
    pid: () => (running() ? (child?.pid ?? null) : null),
    exited: () => (child ? exitOf(child) : Promise.resolve('not started')),
    kill: async () => {
      if (child) await stopChild(child, 15000, 'SIGKILL');
    },
    stop: async () => {
      if (child) await stopChild(child, 15000);
    },
    start: async () => {
      if (running()) return;
      for (let attempt = 1; ; attempt++) {
        context.say(`starting Temporal node ${name} on ${frontend()}`);
        try {
          await startNodeOnce(context, index, name, (spawned) => (child = spawned));
          return;
        } catch (error) {
          if (!(error instanceof PortTaken) || attempt === 3) throw error;
          // Taken between the pick and the bind (or, on a restart, since the node last held it): new ports,
          // and the door told of the new frontend. The other nodes find it at its new address through the
          // membership table, as they find a node that moved to another host.
          context.say(`a port of Temporal node ${name} was taken meanwhile: starting it on others`);
          context.ports[index] = await pickNodePorts();
          await context.restartDoor();
        }
      }
    },
  };
}
