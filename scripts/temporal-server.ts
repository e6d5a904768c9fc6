import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../temporal-config/temporal-cli';
import { withProgress } from './progress';
import { runToEnd } from './platform/children';
import { goBuildInto } from './go-build';

/**
 * The Temporal server release of cluster mode, built from the Go module proxy: the newest 1.32 that builds
 * with this machine's Go (1.32.2 asks for a newer Go than Debian's). The server binary is our own build of
 * it (temporal-config/server: Temporal's main with the platform's claim mapper); the SQL tool is Temporal's.
 */
export const PINNED_TEMPORAL_SERVER = '1.32.0';

const MODULE = 'go.temporal.io/server';

/** Our server's Go module (its go.mod pins the release above). */
export const SERVER_MODULE_DIR = path.join(PROJECT_ROOT, 'temporal-config', 'server');

/** Where the built binaries are kept, by version, so that a new pin builds beside the old one. */
export const TEMPORAL_SERVER_DIR = path.join(PROJECT_ROOT, '.tools', 'temporal-server', PINNED_TEMPORAL_SERVER);

export interface TemporalServerBinaries {
  /** `temporal-server`: every service of a node, with the platform's claim mapper. */
  server: string;
  /** `temporal-sql-tool`: creates and upgrades the databases. */
  sql: string;
  /** The PostgreSQL schemas of this release (`…/schema/postgresql/v12`), read from Go's module cache. */
  schemaDir: string;
}

/** A value of `go env`, or null without Go. */
export function goEnv(name: string): string | null {
  try {
    return execFileSync('go', ['env', name], { encoding: 'utf8', timeout: 30000 }).trim() || null;
  } catch {
    return null;
  }
}

function builtVersion(binary: string): string | null {
  if (!fs.existsSync(binary)) return null;
  try {
    return /version (\S+)/.exec(execFileSync(binary, ['--version'], { encoding: 'utf8', timeout: 30000 }))?.[1] ?? null;
  } catch {
    return null;
  }
}

const binaries = (): Omit<TemporalServerBinaries, 'schemaDir'> => ({
  server: path.join(TEMPORAL_SERVER_DIR, 'server'),
  sql: path.join(TEMPORAL_SERVER_DIR, 'sql'),
});

/**
 * A hash of our module's source, kept beside the built server: a change to the claim mapper rebuilds it,
 * where the version it answers would not change.
 */
function serverSourceHash(): string {
  const hash = crypto.createHash('sha256');
  for (const name of fs
    .readdirSync(SERVER_MODULE_DIR)
    .filter((file) => /\.go$|^go\.(mod|sum)$/.test(file))
    .sort())
    hash
      .update(`${name}\0`)
      .update(fs.readFileSync(path.join(SERVER_MODULE_DIR, name)))
      .update('\0');
  return hash.digest('hex');
}

const stampOf = (server: string) => `${server}.source-sha256`;

const serverIsCurrent = (server: string, source: string) =>
  builtVersion(server) === PINNED_TEMPORAL_SERVER && fs.existsSync(stampOf(server)) && fs.readFileSync(stampOf(server), 'utf8') === source;

const schemaDirOf = (modCache: string) => path.join(modCache, `${MODULE}@v${PINNED_TEMPORAL_SERVER}`, 'schema', 'postgresql', 'v12');

/**
 * Our server and the pinned SQL tool, built into the tools folder (minutes on two cores the first time;
 * seconds once Go's build cache has them), saying so at least every 5 s while it builds. The server is
 * built again whenever our module's source changes.
 */
export async function ensureTemporalServer(say: (line: string) => void = () => undefined): Promise<TemporalServerBinaries> {
  const modCache = goEnv('GOMODCACHE');
  if (!modCache) throw new Error('Go is needed to build the Temporal server of cluster mode: apt-get install golang-go (1.26 or newer).');
  const { server, sql } = binaries();
  const source = serverSourceHash();
  const goEnvironment = { ...process.env, GOBIN: TEMPORAL_SERVER_DIR, GOFLAGS: '-mod=mod' };
  if (!fs.existsSync(sql) || !fs.existsSync(schemaDirOf(modCache))) {
    fs.mkdirSync(TEMPORAL_SERVER_DIR, { recursive: true });
    await withProgress(`building the Temporal SQL tool ${PINNED_TEMPORAL_SERVER} from the Go module proxy into ${TEMPORAL_SERVER_DIR} (once)`, say, () =>
      runToEnd('go', ['install', `${MODULE}/cmd/tools/sql@v${PINNED_TEMPORAL_SERVER}`], goEnvironment),
    );
  }
  if (!serverIsCurrent(server, source)) {
    await withProgress(
      `building the Temporal server ${PINNED_TEMPORAL_SERVER} with the platform's claim mapper into ${TEMPORAL_SERVER_DIR} (minutes the first time)`,
      say,
      () => goBuildInto({ moduleDir: SERVER_MODULE_DIR, program: '.', output: server }),
    );
    fs.writeFileSync(stampOf(server), source);
    const version = builtVersion(server);
    if (version !== PINNED_TEMPORAL_SERVER) throw new Error(`the Temporal server was built into ${server} but answers ${version ?? 'nothing'}`);
  }
  return { server, sql, schemaDir: schemaDirOf(modCache) };
}

/**
 * The Web UI of cluster mode: Temporal's ui-server, built the same way. The newest release that builds with
 * this machine's Go (2.56.3 and later ask for Go 1.26.10); its module carries the UI's built pages.
 */
export const PINNED_TEMPORAL_UI = '2.45.0';

const UI_MODULE = 'github.com/temporalio/ui-server/v2';

export const TEMPORAL_UI_DIR = path.join(PROJECT_ROOT, '.tools', 'temporal-ui', PINNED_TEMPORAL_UI);

/** The pinned ui-server, built once into the tools folder like the server, saying so while it builds. */
export async function ensureTemporalUi(say: (line: string) => void = () => undefined): Promise<string> {
  if (!goEnv('GOMODCACHE')) throw new Error('Go is needed to build the Temporal Web UI of cluster mode: apt-get install golang-go (1.26 or newer).');
  const binary = path.join(TEMPORAL_UI_DIR, 'server');
  if (builtVersion(binary) !== PINNED_TEMPORAL_UI) {
    fs.mkdirSync(TEMPORAL_UI_DIR, { recursive: true });
    await withProgress(`building the Temporal Web UI ${PINNED_TEMPORAL_UI} from the Go module proxy into ${TEMPORAL_UI_DIR} (once)`, say, () =>
      runToEnd('go', ['install', `${UI_MODULE}/cmd/server@v${PINNED_TEMPORAL_UI}`], { ...process.env, GOBIN: TEMPORAL_UI_DIR, GOFLAGS: '-mod=mod' }),
    );
    const version = builtVersion(binary);
    if (version !== PINNED_TEMPORAL_UI) throw new Error(`the Temporal Web UI was built into ${binary} but answers ${version ?? 'nothing'}`);
  }
  return binary;
}
