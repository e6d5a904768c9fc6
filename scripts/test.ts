import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../lib/project-root';

/**
 * `npm test`: the suite's stages in order, each timed. Every stage runs even after one fails, so a single
 * CI run shows every failure. It ends with a table of each stage's wall time (with the stages `.ci/run`
 * timed before it, read from OPSFLOW_CI_STAGES), the slowest test files, and one closing count line.
 */
const STAGES: { name: string; command: string }[] = [
  { name: 'check', command: 'npm run check' },
  { name: 'unit', command: 'npm run test:unit' },
  { name: 'jest', command: 'npx jest --selectProjects slow' },
  { name: 'swarm', command: 'npm run test:swarm' },
  { name: 'playwright', command: 'npx playwright test' },
  { name: 'engine', command: 'npm run test:engine' },
  // promtool on the alert rules (decision 044). promtool is built in the background from the start of the run.
  { name: 'alerts', command: 'npm run test:alerts' },
  // Last: every platform the stages started has removed its containers (#61).
  { name: 'leftovers', command: 'bash scripts/no-leftovers.sh' },
];
const SLOWEST_SHOWN = 15;
/** Each file's time by stage, read by test/support/sequencer.js to start the longest files first. */
const DURATIONS_FILE = path.join(PROJECT_ROOT, 'test', 'support', 'file-durations.json');

type StageTime = { name: string; seconds: number; result: string };
type FileTime = { stage: string; file: string; seconds: number; passed: number; failed: number; skipped: number };

function runStage(name: string, command: string, timingsFile: string): StageTime {
  console.log(`\n== ${name}: ${command}`);
  const started = Date.now();
  const run = spawnSync(command, { shell: true, stdio: 'inherit', env: { ...process.env, OPSFLOW_STAGE: name, OPSFLOW_TEST_TIMINGS: timingsFile } });
  const seconds = (Date.now() - started) / 1000;
  const result = run.status === 0 ? 'passed' : `failed (${run.status ?? run.signal})`;
  console.log(`== ${name}: ${result} in ${seconds.toFixed(0)} s`);
  return { name, seconds, result };
}

/** Stages timed by `.ci/run` before `npm test` (apt, npm ci): lines of "name seconds". */
function earlierStages(): StageTime[] {
  const file = process.env.OPSFLOW_CI_STAGES;
  if (!file || !fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => {
      const [name, seconds] = line.trim().split(/\s+/);
      return { name, seconds: Number(seconds), result: 'done' };
    });
}

function readFileTimes(timingsFile: string): FileTime[] {
  if (!fs.existsSync(timingsFile)) return [];
  return fs
    .readFileSync(timingsFile, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as FileTime);
}

function commitOfTree(): string {
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' });
  return head.status === 0 ? head.stdout.trim() : 'unknown';
}

function printTables(stages: StageTime[], files: FileTime[]): void {
  const total = stages.reduce((sum, stage) => sum + stage.seconds, 0);
  console.log(`\n## Stage times: commit ${commitOfTree()}, ${new Date().toISOString().slice(0, 16)}Z, Node ${process.version}, ${os.cpus().length} cores\n`);
  console.log('| stage | wall time | result |\n|---|---|---|');
  for (const stage of stages) console.log(`| ${stage.name} | ${minutes(stage.seconds)} | ${stage.result} |`);
  console.log(`| **all** | **${minutes(total)}** | |`);
  console.log(`\n### The ${SLOWEST_SHOWN} slowest test files\n\n| file | stage | time | tests |\n|---|---|---|---|`);
  for (const file of [...files].sort((a, b) => b.seconds - a.seconds).slice(0, SLOWEST_SHOWN)) {
    console.log(`| \`${file.file}\` | ${file.stage} | ${file.seconds.toFixed(0)} s | ${file.passed + file.failed + file.skipped} |`);
  }
}

function minutes(seconds: number): string {
  const whole = Math.round(seconds);
  return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, '0')} s`;
}

/**
 * Failed tests, counted from the files' results, plus one for each stage that failed without a failed test
 * of its own (a setup that could not start, a check that found errors): the closing line never says 0 failed
 * when a stage did.
 */
function failedCount(stages: StageTime[], files: FileTime[]): number {
  const failedTests = files.reduce((sum, file) => sum + file.failed, 0);
  const failedWithoutTests = stages.filter(
    (stage) => stage.result.startsWith('failed') && !files.some((file) => file.stage === stage.name && file.failed > 0),
  ).length;
  return failedTests + failedWithoutTests;
}

/**
 * With OPSFLOW_RECORD_DURATIONS=1, this run's file times replace those of the stages it ran, rounded to
 * the second. A run that was not green records nothing: a failed file's time says little.
 */
function recordDurations(files: FileTime[], failed: boolean): void {
  if (process.env.OPSFLOW_RECORD_DURATIONS !== '1' || failed) return;
  const recorded = (fs.existsSync(DURATIONS_FILE) ? JSON.parse(fs.readFileSync(DURATIONS_FILE, 'utf8')) : {}) as Record<string, Record<string, number>>;
  for (const stage of new Set(files.map((file) => file.stage))) {
    const ofStage = files.filter((file) => file.stage === stage).sort((a, b) => b.seconds - a.seconds || a.file.localeCompare(b.file));
    recorded[stage] = Object.fromEntries(ofStage.map((file) => [file.file, Math.max(1, Math.round(file.seconds))]));
  }
  fs.writeFileSync(DURATIONS_FILE, `${JSON.stringify(recorded, null, 2)}\n`);
  console.log(`File times recorded in ${path.relative(process.cwd(), DURATIONS_FILE)}.`);
}

/** How long the alerts stage waits for the background build, once the stages before it are done. */
const PROMTOOL_BUILD_WAIT_MS = 10 * 60 * 1000;

/**
 * Builds promtool, niced, while the other stages run: a fresh machine's build takes minutes of CPU, which the
 * test stages leave idle about a quarter of the time. `wait` answers once the build has ended, well or not, or
 * stops it after PROMTOOL_BUILD_WAIT_MS: the alerts stage then builds it itself, or reports why it cannot.
 */
function promtoolInBackground(): { wait(): Promise<void> } {
  const log = path.join(os.tmpdir(), `opsflow-promtool-build-${process.pid}.log`);
  const out = fs.openSync(log, 'w');
  const child = spawn('nice', ['-n', '19', process.execPath, '--require', 'tsx/cjs', 'scripts/promtool.ts', '--build'], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', out, out],
  });
  const ended = new Promise<void>((resolve) => {
    child.once('error', () => {
      fs.closeSync(out);
      resolve();
    });
    child.once('exit', (code) => {
      fs.closeSync(out);
      // Read once the stages before have ended, so the build's own last line says how long it took.
      const last = fs.readFileSync(log, 'utf8').trim().split('\n').pop() || 'it was built already';
      console.log(`\n(promtool in the background: code ${code}, "${last.trim()}"; ${log})`);
      resolve();
    });
  });
  return {
    wait: async () => {
      const timer = setTimeout(() => child.kill('SIGKILL'), PROMTOOL_BUILD_WAIT_MS);
      await ended;
      clearTimeout(timer);
    },
  };
}

async function main(): Promise<void> {
  const timingsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-test-')), 'files.jsonl');
  const only = process.argv.slice(2);
  const unknown = only.filter((name) => !STAGES.some((stage) => stage.name === name));
  if (unknown.length) {
    console.error(`No such stage: ${unknown.join(', ')}. The stages: ${STAGES.map((stage) => stage.name).join(', ')}.`);
    process.exit(2);
  }
  const chosen = only.length ? STAGES.filter((stage) => only.includes(stage.name)) : STAGES;
  const promtool = chosen.some((stage) => stage.name === 'alerts') ? promtoolInBackground() : null;
  const stages = [...earlierStages()];
  for (const stage of chosen) {
    if (stage.name === 'alerts' && promtool) await promtool.wait();
    stages.push(runStage(stage.name, stage.command, timingsFile));
  }
  const files = readFileTimes(timingsFile);
  printTables(stages, files);
  const count = (key: 'passed' | 'skipped') => files.reduce((sum, file) => sum + file[key], 0);
  const failedStages = stages.filter((stage) => stage.result.startsWith('failed'));
  console.log(`\n${failedStages.length ? `Failed stages: ${failedStages.map((stage) => stage.name).join(', ')}` : 'Every stage passed.'}`);
  console.log(`tests: ${count('passed')} passed, ${failedCount(stages, files)} failed, ${count('skipped')} skipped`);
  recordDurations(files, failedStages.length > 0);
  process.exitCode = failedStages.length ? 1 : 0;
}

void main();
