// @ts-check
'use strict';
/**
 * `node scripts/on-pinned-node.js [--compiled] <entry.ts> [args…]`: runs a TypeScript entry point (`npm start`,
 * `npm test`) on the Node that `.nvmrc` pins, or a newer one. Plain JavaScript, so that it runs on any Node.
 *
 * - On the pinned major or newer, the entry runs here, in this process, through tsx's hook. With
 *   `--compiled`, the platform is compiled first when its sources changed (scripts/compile.js), and the
 *   entry's compiled file runs under plain node instead (`npm start`, decision 041).
 * - On an older Node, the pinned one is installed into `.tools/node` on first use (scripts/pinned-node.sh)
 *   and the entry runs there, with that folder first on PATH: every process the entry starts, by
 *   `process.execPath` or by `node` on PATH, runs on it too (decision 034).
 * - With OPSFLOW_NODE=this, the entry runs on this Node whatever its version: bench/node-versions.ts
 *   measures `npm start` on the older Node that way.
 */
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const PINNED = fs.readFileSync(path.join(ROOT, '.nvmrc'), 'utf8').trim().replace(/^v/, '');
const majorOf = (version) => Number(version.split('.')[0]);

const compiled = process.argv[2] === '--compiled';
const [entry, ...args] = process.argv.slice(compiled ? 3 : 2);
if (!entry) {
  console.error('usage: node scripts/on-pinned-node.js [--compiled] <entry.ts> [args…]');
  process.exit(2);
}

if (majorOf(process.versions.node) >= majorOf(PINNED) || process.env.OPSFLOW_NODE === 'this') {
  const file = compiled ? compiledEntry(entry) : path.resolve(entry);
  if (!compiled) require('tsx/cjs');
  process.argv = [process.execPath, file, ...args];
  require(file);
} else {
  runOnPinnedNode();
}

function runOnPinnedNode() {
  console.error(`Node ${process.versions.node} is older than the Node ${PINNED} this project runs on: using Node ${PINNED} from .tools/node.`);
  const bin = execFileSync('bash', [path.join(ROOT, 'scripts', 'pinned-node.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  // This same script, on the pinned Node: it runs the entry as above.
  const child = spawn(path.join(bin, 'node'), [__filename, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` },
  });
  // Ctrl-C reaches the child from the terminal itself: passed on as well, it would arrive twice, and a
  // second one stops `npm start` at once instead of in order. SIGTERM and SIGHUP come to this process only.
  process.on('SIGINT', () => undefined);
  for (const signal of /** @type {const} */ (['SIGTERM', 'SIGHUP'])) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (signal ? os.constants.signals[signal] : 1)));
}

/**
 * The entry's compiled file, compiled first when a source changed. The compile runs in a process of its own:
 * esbuild leaves a service process and a thread behind in the process that calls it, about 100 MiB for the
 * whole run of `npm start` (bench/start, 2026-12-05).
 */
function compiledEntry(source) {
  const { compiledPath, needsCompile } = require('./compile');
  if (needsCompile()) execFileSync(process.execPath, [path.join(__dirname, 'compile.js')], { stdio: 'inherit' });
  return compiledPath(source);
}
