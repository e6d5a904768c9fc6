/**
 * The edge as production runs it, for the benches that go through it: the API as its own process behind
 * Envoy, writing Envoy's files as the edge's control plane. bench/deploy, bench/deploy-scale and
 * bench/api-scale start it on a bench platform. With `logDir`, the API and Envoy write their logs there.
 */
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEdge } from '../scripts/platform/edge';
import { stopChild, typescriptCommand } from '../scripts/platform/children';
import { freePort } from '../test/support/slots';
import { waitUntil } from '../test/support/wait';
import { BenchPlatform, ROOT } from './support';

export interface RunningEdgePlatform {
  /** The front door: Envoy's plain HTTP listener. */
  edgeUrl: string;
  adminUrl: string;
  /** The folder of Envoy's xDS files, which the API writes. */
  dir: string;
  tlsPort: number;
  edgePid: number;
  api: ChildProcess;
  stop(): Promise<void>;
}

/** Starts the API (a process of its own, with `extraEnv`) and Envoy in front of it; resolves once both answer. */
export async function startApiBehindEdge(
  platform: BenchPlatform,
  options: { edgeConcurrency?: number; extraEnv?: NodeJS.ProcessEnv; logDir?: string } = {},
): Promise<RunningEdgePlatform> {
  const edgeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-bench-edge-'));
  const edgePort = await freePort();
  const apiListenPort = await freePort();
  const adminPort = await freePort();
  const tlsPort = await freePort();
  const api = spawn(...typescriptCommand('api/server.ts'), {
    cwd: ROOT,
    env: {
      ...platform.env,
      API_PORT: String(edgePort),
      API_LISTEN_PORT: String(apiListenPort),
      EDGE_DIR: edgeDir,
      EDGE_ADMIN_URL: `http://127.0.0.1:${adminPort}`,
      EDGE_TLS_PORT: String(tlsPort),
      // A bench's certificates are uploaded: no ACME server is asked for one.
      ACME_DIRECTORY_URL: 'off',
      LOG_LEVEL: 'info',
      ...options.extraEnv,
    },
    stdio: options.logDir
      ? ['ignore', fs.openSync(path.join(options.logDir, 'api.log'), 'a'), fs.openSync(path.join(options.logDir, 'api.log'), 'a')]
      : 'ignore',
  });
  let edge: Awaited<ReturnType<typeof startEdge>> | null = null;
  const stop = async () => {
    await edge?.stop();
    await stopChild(api, 10000);
    fs.rmSync(edgeDir, { recursive: true, force: true });
  };
  try {
    await waitUntil('the API behind the edge', async () => (await fetch(`http://127.0.0.1:${apiListenPort}/healthz`).catch(() => null))?.status === 200, {
      abortIf: () => (api.exitCode !== null ? `the API behind the edge exited with ${api.exitCode}` : null),
    });
    edge = await startEdge({
      dir: edgeDir,
      adminPort,
      logFile: options.logDir ? path.join(options.logDir, 'envoy.log') : '/dev/null',
      concurrency: options.edgeConcurrency ?? 1,
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { edgeUrl: `http://127.0.0.1:${edgePort}`, dir: edgeDir, adminUrl: `http://127.0.0.1:${adminPort}`, tlsPort, edgePid: edge.pid, api, stop };
}
