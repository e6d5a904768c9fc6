import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { writtenFromNow } from './children';

export interface RunningMailCapture {
  smtpPort: number;
  uiPort: number;
  uiUrl: string;
  /** maildev 3's REST API. */
  apiUrl: string;
  /** Resolves, with how it ended, when maildev exits. */
  exited: Promise<string>;
  stop(): Promise<void>;
}

const MAILDEV = path.resolve(__dirname, '..', '..', 'node_modules', '.bin', 'maildev');

/** Starts maildev: a real SMTP server that captures mail, with its web UI and REST API (`/api/email`). */
export async function startMailCapture(args: { smtpPort: number; uiPort: number; logFile?: string }): Promise<RunningMailCapture> {
  if (args.logFile) fs.mkdirSync(path.dirname(args.logFile), { recursive: true });
  const said = writtenFromNow(args.logFile);
  const out = args.logFile ? fs.openSync(args.logFile, 'a') : 'ignore';
  const child: ChildProcess = spawn(
    MAILDEV,
    ['--smtp', String(args.smtpPort), '--web', String(args.uiPort), '--ip', '127.0.0.1', '--web-ip', '127.0.0.1'],
    { stdio: ['ignore', out, out] },
  );
  let exit: string | null = null;
  const exited = new Promise<string>((resolve) =>
    child.on('exit', (code, signal) => {
      exit = `code ${code} signal ${signal}`;
      resolve(exit);
    }),
  );
  const uiUrl = `http://127.0.0.1:${args.uiPort}`;
  const started = Date.now();
  for (;;) {
    if (exit !== null) throw new Error(`mail capture (maildev) exited while starting (${exit}): ${said() || 'it said nothing'}`);
    try {
      const answer = await fetch(`${uiUrl}/api/email`);
      if (answer.ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() - started > 30000) {
      child.kill('SIGKILL');
      throw new Error(`mail capture (maildev) did not answer on ${uiUrl} within 30 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    smtpPort: args.smtpPort,
    uiPort: args.uiPort,
    uiUrl,
    apiUrl: `${uiUrl}/api/email`,
    exited,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const killer = setTimeout(() => child.kill('SIGKILL'), 10000);
        child.once('exit', () => {
          clearTimeout(killer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}
