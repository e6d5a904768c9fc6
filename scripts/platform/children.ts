import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { PROJECT_ROOT } from '../../lib/project-root';

export { PROJECT_ROOT };

/**
 * The command that runs a TypeScript entry point as one process: node with tsx's loader. Not the `tsx`
 * CLI, which runs the entry in a child of its own: a SIGKILL would kill the CLI and orphan the entry.
 * Its CommonJS hook (`tsx/cjs`, the project compiles to CommonJS) rather than `--import tsx`, whose
 * module hooks run on a loader thread of their own: about 23 MiB more per process, measured.
 * Run it with `cwd: PROJECT_ROOT`, where `tsx` resolves.
 */
export function typescriptCommand(entry: string, argv: string[] = []): [string, string[]] {
  return [process.execPath, ['--require', 'tsx/cjs', path.resolve(PROJECT_ROOT, entry), ...argv]];
}

/** Whether this process runs compiled JavaScript, as `npm start` does: then what it starts runs compiled too. */
const RUNNING_COMPILED = __filename.endsWith('.js');

/**
 * The command that runs an entry point of the project: its compiled file under plain node when this process
 * runs compiled (scripts/compile.js made it before this process started), else its source through tsx.
 */
export function entryCommand(entry: string, argv: string[] = []): [string, string[]] {
  if (!RUNNING_COMPILED) return typescriptCommand(entry, argv);
  return [process.execPath, [path.join(PROJECT_ROOT, 'dist', entry.replace(/\.ts$/, '.js')), ...argv]];
}

/** Starts an entry point of the project as its own process, its output appended to `logFile`. */
export function spawnEntry(args: { entry: string; argv?: string[]; env: NodeJS.ProcessEnv; logFile: string }): ChildProcess {
  const [command, argv] = entryCommand(args.entry, args.argv);
  return spawnLogged(command, argv, args.logFile, { cwd: PROJECT_ROOT, env: args.env }).child;
}

/** The kernel's ephemeral range (ports it hands to `listen(0)` and to outgoing connections' local ends). */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low > 0 && high >= low) return [low, high];
  } catch {
    // not Linux: the IANA range
  }
  return [49152, 65535];
}

/** Ports this process has handed out already: not handed again while its holder may still be starting. */
const handedOut = new Set<number>();

/**
 * Ports this process's configuration names for its own parts, bound later (the API's, say, once Temporal is
 * up): `freePort` never draws them. A CI run had the Temporal Web UI draw API_LISTEN_PORT, and its /healthz
 * answered for the API that had not yet started.
 */
export function reservePorts(ports: number[]): void {
  for (const port of ports) handedOut.add(port);
}

/** Whether a loopback listen on `port` succeeds at this moment (it is let go at once). */
export function bindsNow(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/**
 * A loopback port free now, for a process that binds it later: drawn at random outside the kernel's
 * ephemeral range, so that no outgoing connection and no `listen(0)` of another process can take it in
 * between (a port from `listen(0)` was taken that way under load). Another draw of the same kind may still
 * meet it: a start that then loses it says which port, and tries another where the port is its own pick.
 */
export async function freePort(range?: { from: number; to: number }): Promise<number> {
  const outside = range ?? rangeOutsideEphemeral();
  // A kernel whose ephemeral range leaves no room beside it: its own pick, as before.
  if (!outside) return portFromKernel();
  for (let draw = 0; draw < 200; draw++) {
    const port = outside.from + Math.floor(Math.random() * (outside.to - outside.from + 1));
    if (handedOut.has(port)) continue;
    // Held before the probe, so that a call running beside this one cannot draw it meanwhile.
    handedOut.add(port);
    if (await bindsNow(port)) return port;
    handedOut.delete(port);
  }
  throw new Error(`no free loopback port between ${outside.from} and ${outside.to} after 200 draws`);
}

/** At least a thousand ports below the ephemeral range (from 10000) or above it; null when neither side has them. */
function rangeOutsideEphemeral(): { from: number; to: number } | null {
  const [low, high] = ephemeralRange();
  if (low - 1 - 10000 >= 1000) return { from: 10000, to: low - 1 };
  if (65535 - (high + 1) >= 1000) return { from: high + 1, to: 65535 };
  return null;
}

function portFromKernel(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Stops a child with `signal` (SIGTERM unless told), then SIGKILL after `graceMs`; answers once it exited. */
export function stopChild(child: ChildProcess, graceMs = 10000, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill(signal);
  });
}

/**
 * Waits until `url` answers as `isUp` wants (a 2xx unless told otherwise); `stopIf` names a reason to stop
 * waiting at once (the process serving it exited).
 */
export async function waitForHttp(
  url: string,
  args: { what: string; deadlineMs: number; isUp?: (status: number) => boolean; stopIf?: () => string | null },
): Promise<void> {
  const isUp = args.isUp ?? ((status: number) => status >= 200 && status < 300);
  const started = Date.now();
  while (Date.now() - started < args.deadlineMs) {
    const why = args.stopIf?.();
    if (why) throw new Error(`${args.what} ${why} while starting`);
    try {
      if (isUp((await fetch(url)).status)) return;
    } catch {
      // not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${args.what} did not answer on ${url} within ${args.deadlineMs} ms`);
}

/**
 * What a child writes to `logFile` from now on, its last `maxChars`: the reason a start gives when the child
 * exits (a port taken says "address already in use"), instead of only where its log is.
 */
export function writtenFromNow(logFile: string | undefined, maxChars = 600): () => string {
  if (!logFile) return () => '';
  const from = fs.existsSync(logFile) ? fs.statSync(logFile).size : 0;
  return () => {
    try {
      const said = fs.readFileSync(logFile).subarray(from).toString('utf8').trim();
      return said.length > maxChars ? `…${said.slice(-maxChars)}` : said;
    } catch {
      return '';
    }
  };
}

/** A child whose output goes to a log file (or nowhere), with how it ended once it has. */
export interface LoggedChild {
  child: ChildProcess;
  /** How it ended (`code 1 signal null`, or the spawn error), or null while it runs. */
  exit(): string | null;
  /** Resolves, with how it ended, when it exits. */
  exited: Promise<string>;
  /** What it has written to its log since it was started: the reason a start gives when it exits. */
  said(): string;
  /** SIGTERM, then SIGKILL after 10 s. */
  stop(): Promise<void>;
}

/** Starts `command` with its output appended to `logFile` (dropped without one); `env` and `cwd` as spawn takes them. */
export function spawnLogged(command: string, argv: string[], logFile?: string, options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): LoggedChild {
  if (logFile) fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const said = writtenFromNow(logFile);
  const out = logFile ? fs.openSync(logFile, 'a') : 'ignore';
  const child = spawn(command, argv, { ...options, stdio: ['ignore', out, out] });
  if (typeof out === 'number') fs.closeSync(out);
  let exit: string | null = null;
  const exited = new Promise<string>((resolve) => {
    // The first to say how it ended is kept: an 'exit' after a spawn 'error' adds nothing to it.
    child.once('error', (error) => resolve((exit ??= error.message)));
    child.once('exit', (code, signal) => resolve((exit ??= `code ${code} signal ${signal}`)));
  });
  return { child, exit: () => exit, exited, said, stop: () => stopChild(child) };
}

/** Runs a command to its end and answers its output; rejects naming the command, with the output's end, when it fails. */
export function runToEnd(command: string, args: string[], env: NodeJS.ProcessEnv = process.env, cwd?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env, cwd });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('error', (error) => reject(new Error(`${command} could not run: ${error.message}`)));
    child.once('exit', (code, signal) =>
      code === 0 ? resolve(output) : reject(new Error(`${command} ${args.join(' ')} failed (code ${code}, signal ${signal}):\n${output.slice(-3000)}`)),
    );
  });
}
