import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TOOLS_ENVOY } from '../scripts/envoy';

/**
 * The floor beneath the edge, for bench/deploy: the same Envoy binary, with the same worker threads, proxying
 * `/api/{slug}/…` to one instance and doing nothing else: no token check, no identity headers, no header
 * rewriting, no access log, no health checks, no statistics flush. What the edge costs above it is the
 * platform's own work.
 */
export interface RunningBareEnvoy {
  pid: number;
  /** The same path as the edge's `/api/{slug}/x`. */
  url: string;
  stop(): void;
}

export async function startBareEnvoy(args: {
  port: number;
  adminPort: number;
  slug: string;
  instance: string;
  concurrency: number;
}): Promise<RunningBareEnvoy> {
  const [host, port] = args.instance.split(':');
  const typeUrl = (name: string) => `type.googleapis.com/${name}`;
  const config = {
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: args.adminPort } } },
    static_resources: {
      listeners: [
        {
          name: 'bare',
          address: { socket_address: { address: '127.0.0.1', port_value: args.port } },
          filter_chains: [
            {
              filters: [
                {
                  name: 'envoy.filters.network.http_connection_manager',
                  typed_config: {
                    '@type': typeUrl('envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager'),
                    stat_prefix: 'bare',
                    route_config: {
                      virtual_hosts: [
                        {
                          name: 'all',
                          domains: ['*'],
                          routes: [{ match: { prefix: `/api/${args.slug}/` }, route: { cluster: 'instance', prefix_rewrite: '/' } }],
                        },
                      ],
                    },
                    http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': typeUrl('envoy.extensions.filters.http.router.v3.Router') } }],
                  },
                },
              ],
            },
          ],
        },
      ],
      clusters: [
        {
          name: 'instance',
          type: 'STATIC',
          connect_timeout: '1s',
          load_assignment: {
            cluster_name: 'instance',
            endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: host, port_value: Number(port) } } } }] }],
          },
        },
      ],
    },
  };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-bench-bare-envoy-'));
  const file = path.join(dir, 'bare.json');
  fs.writeFileSync(file, JSON.stringify(config));
  const child: ChildProcess = spawn(TOOLS_ENVOY, ['-c', file, '--concurrency', String(args.concurrency), '--disable-hot-restart', '--log-level', 'warn'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let said = '';
  child.stderr!.on('data', (chunk: Buffer) => (said = (said + chunk.toString('utf8')).slice(-2000)));
  // Set by the process's 'error' event (no such binary, say), which the loop below cannot otherwise see.
  const launch: { failure: string | null } = { failure: null };
  child.on('error', (error) => (launch.failure = `could not be started: ${error.message}`));
  const stop = () => {
    child.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30000;
  while ((await fetch(`http://127.0.0.1:${args.adminPort}/ready`, { signal: AbortSignal.timeout(2000) }).catch(() => null))?.status !== 200) {
    const exited = child.exitCode !== null || child.signalCode !== null;
    const failure =
      launch.failure ??
      (exited
        ? `exited while starting (code ${child.exitCode}, signal ${child.signalCode}): ${said || 'it said nothing'}`
        : Date.now() > deadline
          ? `was not ready within 30 s: ${said || 'it said nothing'}`
          : null);
    if (failure) {
      stop();
      throw new Error(`the bare Envoy ${failure}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { pid: child.pid!, url: `http://127.0.0.1:${args.port}/api/${args.slug}/x`, stop };
}
