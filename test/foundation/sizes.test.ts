import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * The size limits of product code (#61): a file within 400 lines, a function within 80 lines of code. The
 * project's lint enforces them; its list of files over a limit today (SIZE_DEBT) only shrinks.
 */
const ROOT = path.resolve(__dirname, '..', '..');
// eslint.config.js is CommonJS and exports its size rules and debt list beside the config.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { SIZE_RULES, SIZE_DEBT } = require(path.join(ROOT, 'eslint.config.js')) as { SIZE_RULES: Record<string, unknown>; SIZE_DEBT: string[] };
const SIZE_RULE_IDS = ['max-lines', 'max-lines-per-function'];

type LintResult = { filePath: string; messages: Array<{ ruleId: string | null }> };

/** The size rules each file breaks, by the project's eslint (with `args` before the files). */
async function sizeRulesBroken(files: string[], args: string[] = []): Promise<string[][]> {
  const eslint = path.join(ROOT, 'node_modules', '.bin', 'eslint');
  const { stdout } = await promisify(execFile)(eslint, ['--format', 'json', ...args, ...files], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 }).catch(
    (error: { stdout?: string }) => ({ stdout: error.stdout ?? '[]' }),
  );
  const results = JSON.parse(stdout) as LintResult[];
  return files.map((file) =>
    (results.find((result) => result.filePath === file)?.messages ?? []).map((message) => message.ruleId ?? '').filter((rule) => SIZE_RULE_IDS.includes(rule)),
  );
}

/** A function whose body has `lines` statements, each on a line of its own. */
const functionOf = (lines: number) =>
  `export function probe(): number {\n  let total = 0;\n${Array.from({ length: lines - 4 }, (_, n) => `  total += ${n};`).join('\n')}\n  return total;\n}\n`;
/** A file of exactly `lines` lines. */
const fileOf = (lines: number) => Array.from({ length: lines }, (_, n) => `export const value${n} = ${n};`).join('\n') + '\n';

const probes: Array<{ name: string; source: string; breaks: string[] }> = [
  { name: 'a function of 81 lines', source: functionOf(81), breaks: ['max-lines-per-function'] },
  { name: 'a function of 80 lines', source: functionOf(80), breaks: [] },
  { name: 'a file of 401 lines', source: fileOf(401), breaks: ['max-lines'] },
  { name: 'a file of 400 lines', source: fileOf(400), breaks: [] },
];
const probeFile = (n: number) => path.join(ROOT, 'lib', `size-probe-${process.pid}-${n}.ts`);
let broken: string[][];

beforeAll(async () => {
  // Probes are written into lib/, linted by the project's own configuration in one run, then removed.
  probes.forEach((probe, n) => fs.writeFileSync(probeFile(n), probe.source));
  try {
    broken = await sizeRulesBroken(probes.map((_, n) => probeFile(n)));
  } finally {
    probes.forEach((_, n) => fs.rmSync(probeFile(n), { force: true }));
  }
}, 120000);

test.each(probes.map((probe, n) => [probe.name, probe.breaks, n] as const))('the lint of product code takes %s as breaking %j', (_name, breaks, n) => {
  expect(broken[n]).toEqual(breaks);
});

test('every file on the size-debt list exists and still breaks a limit: a file split within the limits leaves the list', async () => {
  // The size rules alone, on a parser without types: the debt list turns them off in the project's lint.
  // The configuration is written into the project, where its packages resolve, and removed after.
  const config = path.join(ROOT, `size-debt-probe-${process.pid}.config.cjs`);
  fs.writeFileSync(
    config,
    `module.exports = [{ files: ['**/*.ts'], languageOptions: { parser: require('typescript-eslint').parser }, rules: ${JSON.stringify(SIZE_RULES)} }];\n`,
  );
  let broken: string[][];
  try {
    broken = await sizeRulesBroken(
      SIZE_DEBT.map((file) => path.join(ROOT, file)),
      ['--config', config],
    );
  } finally {
    fs.rmSync(config, { force: true });
  }
  const withinLimits = SIZE_DEBT.filter((_, n) => broken[n].length === 0);
  expect(withinLimits).toEqual([]);
}, 120000);
