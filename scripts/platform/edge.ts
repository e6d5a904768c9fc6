import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { TOOLS_ENVOY, envoyProblem } from '../envoy';
import { writeEdgeBootstrap } from '../../edge/files';
import { writtenFromNow } from './children';

export interface RunningEdge {
  adminUrl: string;
  pid: number;
  /** Envoy's output, its access log (JSON lines) and its own warnings, when no log file takes it. */
  output(): string;
  /** Resolves when Envoy exits, however it does. */
  exited: Promise<string>;
  stop(): Promise<void>;
}

/**
 * Starts Envoy on the xDS files of `dir` (written by the control plane) with its admin on loopback, one
 * worker thread, and answers once it is ready: its listener and clusters loaded. Its output goes to
 * `logFile` (appended) or, without one, is kept for `output()`. `bootstrap`: a whole configuration of its
 * own instead of the edge's (bench/bare-envoy's), written into `dir`; its admin must be on `adminPort`.
 */
export async function startEdge(args: {
  dir: string;
  adminPort: number;
  concurrency?: number;
  deadlineMs?: number;
  logFile?: string;
  bootstrap?: Record<string, unknown>;
}): Promise<RunningEdge> {
  const problem = envoyProblem();
  if (problem) throw new Error(problem);
  const bootstrap = args.bootstrap ? writeOwnBootstrap(args.dir, args.bootstrap) : writeEdgeBootstrap({ dir: args.dir, adminPort: args.adminPort });
  const said = writtenFromNow(args.logFile, 2000);
  const child: ChildProcess = spawn(
    TOOLS_ENVOY,
    [
      '-c',
      bootstrap,
      '--concurrency',
      String(args.concurrency ?? 1),
      '--disable-hot-restart',
      '--log-level',
      'warn',
      '--drain-time-s',
      '2',
      '--file-flush-interval-msec',
      '200',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  let exit: string | null = null;
  if (args.logFile) {
    const log = fs.createWriteStream(args.logFile, { flags: 'a' });
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
  } else {
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
  }
  const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve((exit = `code ${code} signal ${signal}`))));
  const adminUrl = `http://127.0.0.1:${args.adminPort}`;
  const lastOutput = () => (args.logFile ? `${said() || 'it said nothing'} (${args.logFile})` : output.slice(-2000));
  const started = Date.now();
  const deadlineMs = args.deadlineMs ?? 60000;
  // What the last probe met: an answer's status, or why there was none (kept for the error).
  let lastProbe = 'no probe yet';
  for (;;) {
    if (exit !== null) throw new Error(`Envoy exited while starting (${exit}): ${lastOutput()}`);
    // Each probe on a fresh connection with its own timeout: a probe that hangs must not eat the deadline.
    const ready = await fetch(`${adminUrl}/ready`, { signal: AbortSignal.timeout(2000), headers: { connection: 'close' } })
      .then(async (answer) => {
        lastProbe = `${answer.status} ${(await answer.text()).trim().slice(0, 200)}`;
        return answer.status === 200;
      })
      .catch((error: unknown) => {
        lastProbe = reasonOf(error);
        return false;
      });
    if (ready) break;
    if (Date.now() - started > deadlineMs) {
      const unready = await whyNotReady(adminUrl);
      child.kill('SIGKILL');
      throw new Error(
        `Envoy (pid ${child.pid}) was not ready within ${deadlineMs} ms; its admin on ${adminUrl} last answered: ${lastProbe}; ${unready}; its output: ${lastOutput() || 'none'}; ${machineLoad(child.pid)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    adminUrl,
    pid: child.pid!,
    output: () => output,
    exited,
    stop: async () => {
      if (exit !== null) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10000);
      await exited;
      clearTimeout(killer);
    },
  };
}

function writeOwnBootstrap(dir: string, bootstrap: Record<string, unknown>): string {
  const file = path.join(dir, 'bootstrap.json');
  fs.writeFileSync(file, JSON.stringify(bootstrap), { mode: 0o600 });
  return file;
}

/**
 * How loaded the machine and Envoy were when a start gave up: the load averages, the kernel's CPU and I/O
 * pressure, and Envoy's own state and CPU time. A start that takes 60 s with nothing said is starved or stuck.
 */
function machineLoad(pid: number | undefined): string {
  const read = (file: string) => {
    try {
      return fs.readFileSync(file, 'utf8').trim().replace(/\n/g, ' | ');
    } catch {
      return 'unreadable';
    }
  };
  // Fields 3, 14 and 15 of /proc/PID/stat: the state (R running, S sleeping, D in I/O), user and system ticks.
  const stat = pid ? read(`/proc/${pid}/stat`).split(') ')[1]?.split(' ') : undefined;
  const envoy = stat ? `state ${stat[0]}, CPU ${stat[11]}+${stat[12]} ticks` : 'no stat';
  return `load ${read('/proc/loadavg')}; CPU pressure ${read('/proc/pressure/cpu')}; I/O pressure ${read('/proc/pressure/io')}; Envoy ${envoy}`;
}

/** Envoy's own account of a start that never ends: its server state and the init targets still waiting. */
async function whyNotReady(adminUrl: string): Promise<string> {
  const read = (endpoint: string) =>
    fetch(`${adminUrl}${endpoint}`, { signal: AbortSignal.timeout(2000), headers: { connection: 'close' } })
      .then((answer) => answer.text())
      .catch((error: unknown) => `unanswered (${reasonOf(error)})`);
  const state = /"state":\s*"(\w+)"/.exec(await read('/server_info'))?.[1] ?? 'unknown';
  return `server state ${state}, init targets still waiting: ${(await read('/init_dump')).replace(/\s+/g, ' ').slice(0, 1000)}`;
}

/** Why a fetch failed: undici's own error (refused, reset, timed out) is its cause. */
const reasonOf = (error: unknown) => String((error as { cause?: unknown }).cause ?? error);
