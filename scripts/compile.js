// @ts-check
'use strict';
/**
 * `node scripts/compile.js [--force]`: compiles the platform's TypeScript into JavaScript in dist/, one file
 * for each source file, with the same folders. npm start and the production image run these files under
 * plain node, so the processes that run for days carry no transpiler (decision 041).
 *
 * It does nothing when no source changed since the last compile. Each file is written whole, by a rename,
 * and only when its text changed: two starts that compile at the same moment write the same files, and a
 * process that loads one meanwhile never reads half of it.
 *
 * Plain JavaScript, so that it runs before anything can run TypeScript.
 */
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const DIST = path.join(ROOT, 'dist');
/** Written last: the list of sources it compiled. Its time says when. */
const STAMP = path.join(DIST, '.compiled');
/** The folders of product code. Tests and benches keep running TypeScript directly. */
const FOLDERS = ['activities', 'adapters', 'api', 'data', 'domain', 'edge', 'lib', 'migrations', 'scripts', 'temporal-config', 'workers', 'workflows'];

const isSource = (name) => name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts');

/** Every product source file, relative to the project, in a stable order. */
function sources() {
  return FOLDERS.flatMap((folder) =>
    fs
      .readdirSync(path.join(ROOT, folder), { withFileTypes: true, recursive: true })
      .filter((entry) => entry.isFile() && isSource(entry.name))
      .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name))),
  ).sort();
}

/** Besides the sources, what changes the output: how it is compiled, and with what. */
const SETTINGS = ['tsconfig.json', 'scripts/compile.js', 'node_modules/esbuild/package.json'];

/**
 * Whether dist/ holds the compiled form of exactly these sources, none of them (nor a setting) changed
 * since the last compile began.
 */
function isCurrent(files) {
  if (!fs.existsSync(STAMP) || fs.readFileSync(STAMP, 'utf8') !== files.join('\n')) return false;
  const compiledAt = fs.statSync(STAMP).mtimeMs;
  return [...files, ...SETTINGS].every((file) => fs.statSync(path.join(ROOT, file)).mtimeMs <= compiledAt);
}

function writeWhole(file, contents, options = { always: false }) {
  if (!options.always && fs.existsSync(file) && Buffer.compare(fs.readFileSync(file), contents) === 0) return;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, contents);
  fs.renameSync(temporary, file);
}

/** Whether a process with this id runs: the writer of a `.tmp` file may still be renaming it. */
function isRunning(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/**
 * Removes compiled files whose source is gone, so that nothing can load a file the sources no longer have,
 * and the `.tmp` files of a compile that was stopped halfway.
 */
function removeOrphans(written) {
  for (const entry of fs.readdirSync(DIST, { withFileTypes: true, recursive: true })) {
    const file = path.join(entry.parentPath, entry.name);
    if (!entry.isFile() || file === STAMP || written.has(file)) continue;
    const writer = /\.(\d+)\.tmp$/.exec(file);
    if (!writer || !isRunning(Number(writer[1]))) fs.rmSync(file, { force: true });
  }
}

/** Whether a source changed since the last compile. Cheap: esbuild is not loaded. */
function needsCompile() {
  return !isCurrent(sources());
}

/** Compiles when a source changed (or always, with force). Answers whether it compiled. */
function compile(options = {}) {
  const files = sources();
  if (!options.force && isCurrent(files)) return false;
  // Before esbuild reads the sources: a source saved during the compile is newer, and compiled next time.
  const startedAt = new Date();
  const esbuild = require('esbuild');
  const result = esbuild.buildSync({
    entryPoints: files.map((file) => path.join(ROOT, file)),
    outdir: DIST,
    outbase: ROOT,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    // Beside each file, read only under `node --enable-source-maps`: an operator can map a stack trace.
    sourcemap: 'linked',
    write: false,
    logLevel: 'warning',
  });
  for (const output of result.outputFiles) writeWhole(output.path, Buffer.from(output.contents));
  removeOrphans(new Set(result.outputFiles.map((output) => output.path)));
  // Always written, and dated when this compile began.
  writeWhole(STAMP, Buffer.from(files.join('\n')), { always: true });
  fs.utimesSync(STAMP, startedAt, startedAt);
  return true;
}

/** The compiled file of a source entry point: `api/server.ts` -> `<root>/dist/api/server.js`. */
function compiledPath(entry) {
  const relative = path.relative(ROOT, path.resolve(ROOT, entry));
  return path.join(DIST, relative.replace(/\.ts$/, '.js'));
}

module.exports = { compile, compiledPath, needsCompile, DIST };

if (require.main === module) {
  const compiled = compile({ force: process.argv.includes('--force') });
  console.log(compiled ? `compiled the platform into ${path.relative(process.cwd(), DIST) || '.'}` : 'the compiled platform is current');
}
