/**
 * `npx tsx bench/node-versions.ts [--older /usr/bin/node] [--only archive,email]`: every bench, once on an
 * older Node (the machine's own, Node 20 here) and once on the pinned one (.nvmrc), one after the other in
 * the same run, each with its own baseline as it always has. Each bench runs with its Node's folder first on
 * PATH, so the platform's processes run on that Node too; `OPSFLOW_NODE=this` keeps `npm start` on it
 * (scripts/on-pinned-node.js). Sizes are the quick ones: the point is the same bench on two Nodes, side by
 * side. Each run's whole output goes to .data/bench-node/, and its figure lines are printed here.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(__dirname, '..');
const OUT = path.join(ROOT, '.data', 'bench-node');

const BENCHES: Record<string, string[]> = {
  archive: ['bench/archive.ts', '--rows', '100000', '--path', 'rows'],
  publish: ['bench/publish.ts', '--count', '50', '--concurrency', '4'],
  email: ['bench/email.ts', '--users', '1000'],
  start: ['bench/start.ts', '--idle-seconds', '15'],
  deploy: ['bench/deploy.ts', '--deploys', '1', '--requests', '2000', '--rounds', '1'],
};

/** Lines that carry a figure: a ratio, a time, a rate, a memory size or a goal. */
const FIGURE = /\d(\.\d+)?\s*(x\b|s\b|ms\b|µs\b|MiB|\/s\b)|goal|baseline/;

function pinnedNode(): string {
  const bin = execFileSync('bash', [path.join(ROOT, 'scripts', 'pinned-node.sh')], { encoding: 'utf8' }).trim();
  return path.join(bin, 'node');
}

function runBench(node: string, version: string, name: string): Promise<{ code: number | null; lines: string[] }> {
  const logFile = path.join(OUT, `${name}-${version}.log`);
  const log = fs.createWriteStream(logFile);
  const env = { ...process.env, PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ''}`, OPSFLOW_NODE: 'this' };
  const child = spawn(node, ['--require', 'tsx/cjs', ...BENCHES[name]], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      log.write(chunk);
    });
  }
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      log.end();
      resolve({ code, lines: output.split('\n').filter((line) => FIGURE.test(line)) });
    }),
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { older: { type: 'string', default: '/usr/bin/node' }, only: { type: 'string' } } });
  const names = values.only ? values.only.split(',') : Object.keys(BENCHES);
  const unknown = names.filter((name) => !BENCHES[name]);
  if (unknown.length) throw new Error(`no such bench: ${unknown.join(', ')}; the benches: ${Object.keys(BENCHES).join(', ')}`);
  fs.mkdirSync(OUT, { recursive: true });
  const nodes = [values.older!, pinnedNode()].map((node) => ({ node, version: execFileSync(node, ['--version'], { encoding: 'utf8' }).trim() }));
  for (const name of names) {
    for (const { node, version } of nodes) {
      console.log(`\n== ${name} on Node ${version}: ${BENCHES[name].join(' ')}`);
      const { code, lines } = await runBench(node, version, name);
      for (const line of lines) console.log(line);
      console.log(`== ${name} on Node ${version}: exit ${code}; whole output in ${path.relative(ROOT, OUT)}/${name}-${version}.log`);
    }
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
