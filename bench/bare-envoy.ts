import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEdge } from '../scripts/platform/edge';

/** A bare Envoy started by `startBareEnvoy`. */
export interface RunningBareEnvoy {
  pid: number;
  /** The same path as the edge's `/api/{slug}/x`. */
  url: string;
  stop(): Promise<void>;
}

/**
 * The floor beneath the edge, for bench/deploy: the same Envoy binary, with the same worker threads, proxying
 * `/api/{slug}/…` to one instance and doing nothing else: no token check, no identity headers, no header
 * rewriting, no access log, no health checks, statistics flushed at Envoy's default 5 s rather than every
 * second. What the edge costs above it is the platform's own work. Its output is kept for a failed start's error.
 */
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
  const remove = () => fs.rmSync(dir, { recursive: true, force: true });
  try {
    const envoy = await startEdge({
      dir,
      adminPort: args.adminPort,
      concurrency: args.concurrency,
      bootstrap: config,
      deadlineMs: 30000,
    });
    return {
      pid: envoy.pid,
      url: `http://127.0.0.1:${args.port}/api/${args.slug}/x`,
      stop: async () => {
        await envoy.stop();
        remove();
      },
    };
  } catch (error) {
    remove();
    throw error;
  }
}
