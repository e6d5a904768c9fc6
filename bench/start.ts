/**
 * `npx tsx bench/start.ts [--idle-seconds 30]`: what the platform costs at rest. Runs `npm start` on fresh
 * data and ports of its own, waits until it is ready and then `--idle-seconds` more, and sums the memory of
 * every process under it, PostgreSQL included, named by part: resident memory (RSS, as `ps` shows it) and
 * proportional memory (PSS: a page that processes share counts once in all, so the sum is close to what
 * the machine gives). Then it stops the platform, starts it again on the same data, and prints that second start's
 * time to ready beside the first's. The goal (#60, in PSS) is printed beside the figures: there is no baseline to
 * run, since the platform's processes are the thing measured.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ctrlC, npmStart, npmStartEnvironment, NpmStarted } from '../test/support/npm-start';

const ROOT = path.resolve(__dirname, '..');
/** #60's goal for an idle `npm start`, all processes, in PSS (it replaced #32's 600 MiB of RSS). */
const GOAL_PSS_MIB = 550;

interface ProcessMemory {
  pid: number;
  part: string;
  rssMib: number;
  pssMib: number;
}

/** Every process below `root`, from the kernel's table of children. */
function processTree(root: number): number[] {
  const found: number[] = [];
  const pending = [root];
  while (pending.length > 0) {
    const pid = pending.shift()!;
    found.push(pid);
    for (const task of safeReadDir(`/proc/${pid}/task`)) {
      const children = safeRead(`/proc/${pid}/task/${task}/children`).trim();
      if (children) pending.push(...children.split(/\s+/).map(Number));
    }
  }
  return found;
}

/** Which part of the platform a process is, from its command line. */
function partOf(commandLine: string): string {
  const parts: Array<[RegExp, string]> = [
    [/\bpostgres\b/, 'PostgreSQL'],
    [/start-dev/, 'Temporal dev server'],
    [/ui-server|temporal-ui/, 'Temporal Web UI'],
    [/\benvoy\b/, 'Envoy (the edge)'],
    [/mailpit/, 'mail capture (Mailpit)'],
    [/pebble-challtestsrv/, "ACME server's DNS stand-in (pebble-challtestsrv)"],
    [/pebble/, 'ACME server (Pebble)'],
    [/workers\/main\.[jt]s/, 'workers'],
    [/api\/server\.[jt]s/, 'API'],
    [/scripts\/start\.ts/, 'supervisor (scripts/start.ts)'],
    [/\bnpm\b/, 'npm'],
  ];
  return parts.find(([pattern]) => pattern.test(commandLine))?.[1] ?? commandLine.slice(0, 60);
}

function memoryOf(pid: number): ProcessMemory | null {
  const commandLine = safeRead(`/proc/${pid}/cmdline`).replace(/\0/g, ' ').trim();
  const status = safeRead(`/proc/${pid}/status`);
  const rollup = safeRead(`/proc/${pid}/smaps_rollup`);
  if (!commandLine || !status) return null;
  const kib = (text: string, field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
  return { pid, part: partOf(commandLine), rssMib: kib(status, 'VmRSS') / 1024, pssMib: kib(rollup, 'Pss') / 1024 };
}

function safeRead(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function safeReadDir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/** Every npm start this bench began, stopped or not: each is stopped when the bench ends, however it ends. */
const begun: NpmStarted[] = [];

async function timedStart(env: NodeJS.ProcessEnv): Promise<{ started: NpmStarted; seconds: number }> {
  const startedAt = performance.now();
  const started = await npmStart({ cwd: ROOT, env, timeoutMs: 300000, onSpawn: (spawned) => begun.push(spawned) });
  return { started, seconds: (performance.now() - startedAt) / 1000 };
}

async function stopEverything(dataDir: string): Promise<void> {
  for (const started of begun) await ctrlC(started, { killAfterMs: 60000 });
  fs.rmSync(dataDir, { recursive: true, force: true });
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'idle-seconds': { type: 'string', default: '30' } } });
  const idleSeconds = Number(values['idle-seconds']);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-bench-start-'));
  fs.chmodSync(dataDir, 0o755);
  // npm start runs in a process group of its own: Ctrl-C on the bench stops it here.
  process.once('SIGINT', () => void stopEverything(dataDir).then(() => process.exit(130)));
  try {
    const { env } = await npmStartEnvironment({ dataDir, scope: 'opsflow-bench-start' });
    console.log(
      `bench/start: npm start on fresh data, ready, then ${idleSeconds} s idle (${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB)`,
    );
    const first = await timedStart(env);
    await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
    const processes = processTree(first.started.child.pid!)
      .map(memoryOf)
      .filter((memory): memory is ProcessMemory => memory !== null);
    const byPart = new Map<string, { count: number; rssMib: number; pssMib: number }>();
    for (const memory of processes) {
      const sum = byPart.get(memory.part) ?? { count: 0, rssMib: 0, pssMib: 0 };
      byPart.set(memory.part, { count: sum.count + 1, rssMib: sum.rssMib + memory.rssMib, pssMib: sum.pssMib + memory.pssMib });
    }
    console.log(`  ${'part'.padEnd(32)} ${'processes'.padStart(9)} ${'RSS MiB'.padStart(8)} ${'PSS MiB'.padStart(8)}`);
    for (const [part, sum] of [...byPart.entries()].sort((a, b) => b[1].rssMib - a[1].rssMib)) {
      console.log(`  ${part.padEnd(32)} ${String(sum.count).padStart(9)} ${sum.rssMib.toFixed(0).padStart(8)} ${sum.pssMib.toFixed(0).padStart(8)}`);
    }
    const rss = processes.reduce((total, memory) => total + memory.rssMib, 0);
    const pss = processes.reduce((total, memory) => total + memory.pssMib, 0);
    console.log(`  ${'all of npm start'.padEnd(32)} ${String(processes.length).padStart(9)} ${rss.toFixed(0).padStart(8)} ${pss.toFixed(0).padStart(8)}`);
    await ctrlC(first.started, { killAfterMs: 60000 });

    const second = await timedStart(env);
    console.log(`  time to ready: first start ${first.seconds.toFixed(1)} s (fresh data), second start ${second.seconds.toFixed(1)} s (same data)`);
    console.log(
      `  idle footprint, all processes: RSS ${rss.toFixed(0)} MiB, PSS ${pss.toFixed(0)} MiB; goal PSS <= ${GOAL_PSS_MIB} MiB: ${(pss / GOAL_PSS_MIB).toFixed(2)} of it`,
    );
  } finally {
    await stopEverything(dataDir);
  }
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
