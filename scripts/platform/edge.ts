import { ChildProcess, spawn } from 'node:child_process';
import { TOOLS_ENVOY, envoyProblem } from '../envoy';
import { writeEdgeBootstrap } from '../../data/deploy/edge/edge-files';

export interface RunningEdge {
  adminUrl: string;
  pid: number;
  /** Envoy's output: its access log (JSON lines) and its own warnings. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts Envoy on the xDS files of `dir` (written by the control plane) with its admin on loopback, one
 * worker thread, and answers once it is ready: its listener and clusters loaded.
 */
export async function startEdge(args: { dir: string; adminPort: number; concurrency?: number; deadlineMs?: number }): Promise<RunningEdge> {
  const problem = envoyProblem();
  if (problem) throw new Error(problem);
  const bootstrap = writeEdgeBootstrap({ dir: args.dir, adminPort: args.adminPort });
  const child: ChildProcess = spawn(
    TOOLS_ENVOY,
    ['-c', bootstrap, '--concurrency', String(args.concurrency ?? 1), '--disable-hot-restart', '--log-level', 'warn', '--drain-time-s', '2', '--file-flush-interval-msec', '200'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  let exit: string | null = null;
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  child.once('exit', (code, signal) => (exit = `code ${code} signal ${signal}`));
  const adminUrl = `http://127.0.0.1:${args.adminPort}`;
  const started = Date.now();
  for (;;) {
    if (exit !== null) throw new Error(`Envoy exited while starting (${exit}): ${output.slice(-2000)}`);
    const ready = await fetch(`${adminUrl}/ready`).then((answer) => answer.status === 200, () => false);
    if (ready) break;
    if (Date.now() - started > (args.deadlineMs ?? 20000)) {
      child.kill('SIGKILL');
      throw new Error(`Envoy was not ready within ${args.deadlineMs ?? 20000} ms: ${output.slice(-2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    adminUrl,
    pid: child.pid!,
    output: () => output,
    stop: async () => {
      if (exit !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
