import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export const PROJECT_ROOT = path.resolve(__dirname, '..', '..');

/**
 * The command that runs a TypeScript entry point as one process: node with tsx's loader. Not the `tsx`
 * CLI, which runs the entry in a child of its own: a SIGKILL would kill the CLI and orphan the entry.
 * Run it with `cwd: PROJECT_ROOT`, where `tsx` resolves.
 */
export function typescriptCommand(entry: string, argv: string[] = []): [string, string[]] {
  return [process.execPath, ['--import', 'tsx', path.resolve(PROJECT_ROOT, entry), ...argv]];
}

/** Starts a TypeScript entry point of the project as its own process, its output appended to `logFile`. */
export function spawnEntry(args: { entry: string; argv?: string[]; env: NodeJS.ProcessEnv; logFile: string }): ChildProcess {
  fs.mkdirSync(path.dirname(args.logFile), { recursive: true });
  const out = fs.openSync(args.logFile, 'a');
  const [command, argv] = typescriptCommand(args.entry, args.argv);
  return spawn(command, argv, {
    cwd: PROJECT_ROOT,
    env: args.env,
    stdio: ['ignore', out, out],
  });
}

/**
 * A loopback port free now (bound to port 0 and let go). A process that binds it later may find it taken
 * under load: its start then tries another.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Stops a child with SIGTERM, then SIGKILL after `graceMs`. */
export function stopChild(child: ChildProcess, graceMs = 10000): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export async function waitForHttpOk(url: string, deadlineMs: number, isAlive: () => boolean): Promise<void> {
  const started = Date.now();
  while (Date.now() - started < deadlineMs) {
    if (!isAlive()) throw new Error(`the process serving ${url} exited`);
    try {
      const answer = await fetch(url);
      if (answer.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${url} did not answer 200 within ${deadlineMs} ms`);
}
