import { ChildProcess, spawn } from 'node:child_process';
import { waitUntil } from './wait';

/** `npm start` as a terminal runs it: its process, everything it printed, and the development token of its banner. */
export interface NpmStarted {
  child: ChildProcess;
  output: () => string;
  token: string;
}

/** Runs `npm start` in `cwd`, in its own process group, until its ready banner; fails with its output otherwise. */
export async function npmStart(args: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; onSpawn?: (started: NpmStarted) => void }): Promise<NpmStarted> {
  const child = spawn('npm', ['start'], { cwd: args.cwd, env: args.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const started: NpmStarted = { child, output: () => output, token: '' };
  args.onSpawn?.(started);
  await waitUntil('the ready banner of npm start', () => output.includes('Ctrl-C stops everything'), {
    timeoutMs: args.timeoutMs,
    intervalMs: 250,
    abortIf: () => (child.exitCode !== null ? `npm start exited:\n${output}` : null),
  }).catch((error: Error) => {
    throw new Error(`${error.message}\n${output}`);
  });
  const token = /Development admin token[^\n]*\n\s+(\S+)/.exec(output)?.[1];
  if (!token) throw new Error(`no token in the banner:\n${output}`);
  started.token = token;
  return started;
}

/**
 * Ctrl-C: SIGINT to the whole process group, then waits for npm to exit; with `killAfterMs` (a clean-up,
 * not a test of the shutdown), what is left after that long is killed.
 */
export async function ctrlC(started: NpmStarted, options: { killAfterMs?: number } = {}): Promise<void> {
  if (started.child.exitCode !== null || started.child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => started.child.once('exit', () => resolve()));
  process.kill(-started.child.pid!, 'SIGINT');
  if (options.killAfterMs === undefined) return exited;
  const stopped = await Promise.race([exited.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), options.killAfterMs))]);
  if (!stopped) {
    process.kill(-started.child.pid!, 'SIGKILL');
    await exited;
  }
}
