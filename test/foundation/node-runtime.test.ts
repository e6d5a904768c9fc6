import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { native } from '@temporalio/core-bridge';
import { transformSync } from '@swc/core';
import { Client } from 'ssh2';

/**
 * The Node the project runs on (decision 034): `.nvmrc` pins it, the suite runs on it, the production image
 * is built on its major, and every native module loads on it. A native module built for another Node's
 * ABI fails only when it is first loaded, so each is loaded here, in the Node that runs the tests.
 */
const ROOT = path.resolve(__dirname, '..', '..');
const PINNED = fs.readFileSync(path.join(ROOT, '.nvmrc'), 'utf8').trim();
const majorOf = (version: string) => Number(version.replace(/^v/, '').split('.')[0]);

test('the suite runs on the Node that .nvmrc pins; package.json asks for 22 or later, and the production image is built on the pinned major', () => {
  expect(process.version).toBe(`v${PINNED}`);
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  expect(manifest.engines.node).toBe('>=22');
  const bases = [...fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8').matchAll(/^FROM (\S+)/gm)].map((found) => found[1]);
  expect(bases).toEqual([`node:${majorOf(PINNED)}-bookworm-slim`, `node:${majorOf(PINNED)}-bookworm-slim`]);
});

test('the native modules load and work on this Node: DuckDB, the Temporal core bridge, SWC, and ssh2 under dockerode', async () => {
  const duckdb = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
  const connection = await duckdb.connect();
  const rows = (await connection.runAndReadAll('SELECT 40 + 2 AS answer')).getRowObjects();
  expect(rows).toEqual([{ answer: 42 }]);
  connection.closeSync();
  duckdb.closeSync();

  // The bridge is the Rust core every worker and client runs on: loading it is what fails on a wrong ABI.
  expect(Object.keys(native)).toEqual(expect.arrayContaining(['newClient', 'newRuntime']));
  expect(transformSync('const a: number = 1;', { jsc: { parser: { syntax: 'typescript' } } }).code.trim()).toBe('var a = 1;');
  // ssh2's binding is built at install for the installing Node (`.ci/run` builds it against the pinned Node's
  // headers); built for another, ssh2 runs its JavaScript instead, so ssh2 itself must load either way.
  expect(typeof Client).toBe('function');
});

test('an older Node runs an entry on the pinned one: the entry and the processes it starts, by its own path or by `node` on PATH', () => {
  const older = olderNode();
  if (!older) return void console.log('no Node older than the pinned one on this machine: nothing to run it from');
  const entry = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-node-')), 'versions.ts');
  fs.writeFileSync(
    entry,
    "const found: string[] = [process.version, require('node:child_process').execFileSync('node', ['--version'], { encoding: 'utf8' }).trim()];\nconsole.log(JSON.stringify(found));\n",
  );
  const printed = execFileSync(older, [path.join(ROOT, 'scripts', 'on-pinned-node.js'), entry], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  expect(JSON.parse(printed.trim().split('\n').pop()!)).toEqual([`v${PINNED}`, `v${PINNED}`]);
});

/** A `node` of an older major on this machine (the system's, here Node 20), if any. */
function olderNode(): string | null {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node', '/bin/node']) {
    if (!fs.existsSync(candidate)) continue;
    const version = execFileSync(candidate, ['--version'], { encoding: 'utf8' }).trim();
    if (majorOf(version) < majorOf(PINNED)) return candidate;
  }
  return null;
}
