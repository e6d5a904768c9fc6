import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { TOOLS_VENV } from '../temporal-config/temporal-cli';

/** The schemathesis release the API fuzzer runs, installed from the Python package index into `.tools/venv`. */
export const PINNED_SCHEMATHESIS = '4.32.5';

export const TOOLS_SCHEMATHESIS = path.join(TOOLS_VENV, 'bin', 'st');

function installedVersion(): string | null {
  if (!fs.existsSync(TOOLS_SCHEMATHESIS)) return null;
  try {
    return /version (\S+)/.exec(execFileSync(TOOLS_SCHEMATHESIS, ['--version'], { encoding: 'utf8', timeout: 30000 }))?.[1] ?? null;
  } catch {
    return null;
  }
}

/** Installs the pinned schemathesis into the project's tools virtual environment; idempotent. */
export function installFuzzer(): void {
  if (installedVersion() === PINNED_SCHEMATHESIS) return;
  if (!fs.existsSync(path.join(TOOLS_VENV, 'bin', 'pip'))) execFileSync('python3', ['-m', 'venv', TOOLS_VENV], { stdio: 'inherit' });
  execFileSync(path.join(TOOLS_VENV, 'bin', 'pip'), ['install', '--quiet', `schemathesis==${PINNED_SCHEMATHESIS}`], { stdio: 'inherit' });
}

/** Null when the pinned fuzzer is ready, else what is wrong and how to fix it. */
export function fuzzerProblem(): string | null {
  const version = installedVersion();
  if (version === PINNED_SCHEMATHESIS) return null;
  return `schemathesis ${PINNED_SCHEMATHESIS} is not in ${TOOLS_SCHEMATHESIS} (found ${version ?? 'none'}): run \`npx tsx scripts/install-tools.ts\` (.ci/run does).`;
}
