import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../lib/project-root';
import { goBuildInto } from '../go-build';
import { withProgress } from '../progress';
import { PINNED_PROMETHEUS } from '../promtool';
import { goEnv } from '../temporal-server';
import { spawnLogged, waitForHttp } from './children';

const TOOLS_MODULE_DIR = path.join(PROJECT_ROOT, 'monitoring', 'tools');
const BINARY = path.join(PROJECT_ROOT, '.tools', 'prometheus', PINNED_PROMETHEUS, 'prometheus');
const ALERT_RULES = path.join(PROJECT_ROOT, 'monitoring', 'prometheus', 'alerts.yml');

/**
 * The Prometheus server, built once from its Go module like promtool (monitoring/tools/go.mod names both).
 * Its web UI's assets are built by npm in Prometheus's own repository and are not in the Go module, so it
 * serves its API and no UI. `remove_all_sd` leaves out the clouds' service discovery: static targets are
 * all `npm start` needs.
 */
export async function ensurePrometheus(say: (line: string) => void = () => undefined): Promise<string> {
  if (fs.existsSync(BINARY)) return BINARY;
  if (!goEnv('GOMODCACHE')) throw new Error('Go is needed to build Prometheus: apt-get install golang-go (1.26 or newer).');
  await withProgress(`building Prometheus ${PINNED_PROMETHEUS} from the Go module proxy into ${path.dirname(BINARY)} (once)`, say, () =>
    goBuildInto({ moduleDir: TOOLS_MODULE_DIR, program: 'github.com/prometheus/prometheus/cmd/prometheus', output: BINARY, tags: ['remove_all_sd'] }),
  );
  return BINARY;
}

export interface PrometheusTargets {
  /** The API's own address (not the edge's): /metrics there, with the internal token. */
  api: string;
  internalToken: string;
  /** Each worker's WORKER_METRICS_PORT address. */
  workers: string[];
}

/** Scrapes the API and the workers every 15 s, with the platform's alert rules loaded. */
function prometheusConfig(targets: PrometheusTargets, tokenFile: string): string {
  const list = (addresses: string[]) => addresses.map((address) => `'${address}'`).join(', ');
  return `global:
  scrape_interval: 15s
  evaluation_interval: 15s
rule_files:
  - '${ALERT_RULES}'
scrape_configs:
  - job_name: opsflow-api
    authorization:
      type: Bearer
      credentials_file: '${tokenFile}'
    static_configs:
      - targets: [${list([targets.api])}]
  - job_name: opsflow-worker
    static_configs:
      - targets: [${list(targets.workers)}]
`;
}

export interface RunningPrometheus {
  url: string;
  exited: Promise<string>;
  stop(): Promise<void>;
}

/** Starts Prometheus on loopback `port`, its data in `dataDir` (kept across starts, two days of it). */
export async function startPrometheus(args: { port: number; dataDir: string; targets: PrometheusTargets; logFile?: string }): Promise<RunningPrometheus> {
  const binary = await ensurePrometheus();
  fs.mkdirSync(args.dataDir, { recursive: true });
  // The token in a file of its own, readable by this user alone: never on a command line or in the config.
  const tokenFile = path.join(args.dataDir, 'internal-token');
  fs.writeFileSync(tokenFile, args.targets.internalToken, { mode: 0o600 });
  const configFile = path.join(args.dataDir, 'prometheus.yml');
  fs.writeFileSync(configFile, prometheusConfig(args.targets, tokenFile));
  const prometheus = spawnLogged(
    binary,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${path.join(args.dataDir, 'data')}`,
      '--storage.tsdb.retention.time=2d',
      `--web.listen-address=127.0.0.1:${args.port}`,
    ],
    args.logFile,
  );
  const url = `http://127.0.0.1:${args.port}`;
  try {
    await waitForHttp(`${url}/-/ready`, {
      what: 'Prometheus',
      deadlineMs: 30000,
      stopIf: () => (prometheus.exit() === null ? null : `exited (${prometheus.exit()}): ${prometheus.said() || 'it said nothing'}`),
    });
  } catch (error) {
    await prometheus.stop();
    throw error;
  }
  return { url, exited: prometheus.exited, stop: prometheus.stop };
}
