// @ts-check
'use strict';
/**
 * `node scripts/on-pinned-node.js <entry.ts> [args…]`: runs a TypeScript entry point (`npm start`,
 * `npm test`) on the Node that `.nvmrc` pins, or a newer one. Plain JavaScript, so that it runs on any Node.
 *
 * - On the pinned major or newer, the entry runs here, in this process, through tsx's hook.
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

const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  console.error('usage: node scripts/on-pinned-node.js <entry.ts> [args…]');
  process.exit(2);
}

if (majorOf(process.versions.node) >= majorOf(PINNED) || process.env.OPSFLOW_NODE === 'this') {
  require('tsx/cjs');
  process.argv = [process.execPath, path.resolve(entry), ...args];
  require(path.resolve(entry));
} else {
  runOnPinnedNode();
}

function runOnPinnedNode() {
  console.error(`Node ${process.versions.node} is older than the Node ${PINNED} this project runs on: using Node ${PINNED} from .tools/node.`);
  const bin = execFileSync('bash', [path.join(ROOT, 'scripts', 'pinned-node.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  const child = spawn(path.join(bin, 'node'), ['--require', 'tsx/cjs', entry, ...args], {
    stdio: 'inherit',
    env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` },
  });
  // Ctrl-C reaches the child from the terminal itself: passed on as well, it would arrive twice, and a
  // second one stops `npm start` at once instead of in order. SIGTERM and SIGHUP come to this process only.
  process.on('SIGINT', () => undefined);
  for (const signal of /** @type {const} */ (['SIGTERM', 'SIGHUP'])) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (signal ? os.constants.signals[signal] : 1)));
}
