import { spawn, spawnSync } from 'node:child_process';

/**
 * `npm run check`: the console's API schema first (the type checks and the lint read it), then the three
 * type checks, the lint and the formatter's check side by side, each one's output printed whole when it
 * ends. Each is one process on one core; one after another they took about two minutes on two cores.
 */
const SIDE_BY_SIDE: Array<[string, string]> = [
  ['types (platform)', 'npx tsc --noEmit -p tsconfig.json'],
  ['types (console)', 'npx tsc --noEmit -p console/tsconfig.json'],
  ['types (console tests)', 'npx tsc --noEmit -p test/console/tsconfig.json'],
  ['lint', 'npx eslint .'],
  ['format', 'npx prettier --check "**/*.{ts,tsx,js,mjs,cjs}"'],
];

function run(name: string, command: string): Promise<boolean> {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(command, { shell: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => {
      const seconds = Math.round((Date.now() - started) / 1000);
      console.log(`${code === 0 ? 'passed' : 'FAILED'}: ${name} (${seconds} s)${output.trim() ? `\n${output.trim()}` : ''}`);
      resolve(code === 0);
    });
  });
}

async function main(): Promise<void> {
  const schema = spawnSync('node', ['--require', 'tsx/cjs', 'scripts/console.ts', '--schema'], { stdio: 'inherit' });
  if (schema.status !== 0) {
    console.error("FAILED: the console's API schema was not generated");
    process.exit(1);
  }
  const results = await Promise.all(SIDE_BY_SIDE.map(([name, command]) => run(name, command)));
  process.exitCode = results.every(Boolean) ? 0 : 1;
}

void main();
