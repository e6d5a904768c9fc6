import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT, runToEnd } from '../platform/children';

/**
 * The `docker compose` plugin, built from its Go module (github.com/docker/compose/v5) into the tools folder,
 * for machines whose Docker has none (Debian's docker.io). Its module cannot be `go install`ed (its go.mod
 * has exclude directives), so its source is copied out of the module cache and built there.
 */
export const COMPOSE_VERSION = '5.6.0';
const MODULE = 'github.com/docker/compose/v5';
const TOOLS_DIR = path.join(PROJECT_ROOT, '.tools', 'compose', COMPOSE_VERSION);
/** A Docker configuration folder of the project's own whose cli-plugins hold the plugin (DOCKER_CONFIG). */
export const DOCKER_CONFIG_DIR = path.join(TOOLS_DIR, 'docker-config');
const PLUGIN = path.join(DOCKER_CONFIG_DIR, 'cli-plugins', 'docker-compose');

function pluginVersion(): string | null {
  try {
    return /v(\d+\.\d+\.\d+)/.exec(execFileSync(PLUGIN, ['version'], { encoding: 'utf8' }))?.[1] ?? null;
  } catch {
    return null;
  }
}

/** Builds the plugin unless it is there; answers the DOCKER_CONFIG under which `docker compose` finds it. */
export async function ensureComposePlugin(): Promise<string> {
  if (pluginVersion() === COMPOSE_VERSION) return DOCKER_CONFIG_DIR;
  const env = { ...process.env, GOFLAGS: '-mod=mod' };
  const download = JSON.parse(await runToEnd('go', ['mod', 'download', '-json', `${MODULE}@v${COMPOSE_VERSION}`], env)) as { Dir: string };
  const source = path.join(TOOLS_DIR, 'source');
  fs.rmSync(source, { recursive: true, force: true });
  fs.cpSync(download.Dir, source, { recursive: true });
  fs.mkdirSync(path.dirname(PLUGIN), { recursive: true });
  const ldflags = `-s -w -X ${MODULE}/internal.Version=v${COMPOSE_VERSION}`;
  await runToEnd('bash', ['-c', `chmod -R u+w "$0" && cd "$0" && go build -trimpath -ldflags "$1" -o "$2" ./cmd`, source, ldflags, PLUGIN], env);
  fs.rmSync(source, { recursive: true, force: true });
  if (pluginVersion() !== COMPOSE_VERSION) throw new Error(`the compose plugin was built into ${PLUGIN} but does not answer ${COMPOSE_VERSION}`);
  return DOCKER_CONFIG_DIR;
}
