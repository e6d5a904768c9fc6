import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT, runToEnd } from './children';

const TOOLS = path.join(PROJECT_ROOT, '.tools');

/**
 * A Go program built once into .tools/{name}/{version} from the Go module proxy; answers its path. Built on
 * first use, as a fresh machine's first start builds its other tools.
 */
export async function goInstalled(args: { name: string; module: string; version: string; binary: string }): Promise<string> {
  const dir = path.join(TOOLS, args.name, args.version);
  const built = path.join(dir, args.binary);
  if (!fs.existsSync(built)) {
    fs.mkdirSync(dir, { recursive: true });
    await runToEnd('go', ['install', `${args.module}@v${args.version}`], { ...process.env, GOBIN: dir, GOFLAGS: '-mod=mod' });
  }
  return built;
}
