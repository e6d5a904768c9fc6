import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT, runToEnd } from './children';

const TOOLS = path.join(PROJECT_ROOT, '.tools');

/**
 * A Go program whose web UI is built by npm before Go embeds it (Mailpit's is left out of its module), built
 * once into .tools/{name}/{version}-with-ui: the module from the Go module proxy, copied out of Go's read-only
 * cache, its npm packages from the npm registry, then `npm run {assetsScript}` and `go build`. A few minutes
 * the first time.
 */
export async function goBuiltWithWebAssets(args: {
  name: string;
  module: string;
  version: string;
  binary: string;
  assetsScript: string;
  /** npm packages put at another version than the module's package.json names: ones the registry here lacks. */
  npmVersions: Record<string, string>;
}): Promise<string> {
  const dir = path.join(TOOLS, args.name, `${args.version}-with-ui`);
  const built = path.join(dir, args.binary);
  if (fs.existsSync(built)) return built;
  const env = { ...process.env, GOFLAGS: '-mod=mod', PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' };
  const downloaded = JSON.parse(await runToEnd('go', ['mod', 'download', '-json', `${args.module}@v${args.version}`], env)) as { Dir: string };
  const work = fs.mkdtempSync(path.join(os.tmpdir(), `opsflow-${args.name}-`));
  try {
    fs.cpSync(downloaded.Dir, work, { recursive: true });
    await runToEnd('chmod', ['-R', 'u+w', work]);
    // Not `npm ci`: the registry here lacks some versions the module's lock names, so its packages are
    // resolved again from package.json, with `npmVersions` in place of what the registry cannot give.
    const manifest = path.join(work, 'package.json');
    const packageJson = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { dependencies?: Record<string, string> };
    packageJson.dependencies = { ...packageJson.dependencies, ...args.npmVersions };
    fs.writeFileSync(manifest, JSON.stringify(packageJson, null, 2));
    fs.rmSync(path.join(work, 'package-lock.json'), { force: true });
    await runToEnd('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts'], env, work);
    await runToEnd('npm', ['run', args.assetsScript], env, work);
    fs.mkdirSync(dir, { recursive: true });
    // Renamed into place once whole: a build cut short leaves no binary that the next start would take as built.
    await runToEnd('go', ['build', '-o', `${built}.partial`, '.'], env, work);
    fs.renameSync(`${built}.partial`, built);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return built;
}
