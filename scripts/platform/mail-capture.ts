import path from 'node:path';
import { spawnLogged } from './children';

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
  const { child, exit, exited, said, stop } = spawnLogged(
    MAILDEV,
    ['--smtp', String(args.smtpPort), '--web', String(args.uiPort), '--ip', '127.0.0.1', '--web-ip', '127.0.0.1'],
    args.logFile,
  );
  const uiUrl = `http://127.0.0.1:${args.uiPort}`;
  const started = Date.now();
  for (;;) {
    if (exit() !== null) throw new Error(`mail capture (maildev) exited while starting (${exit()}): ${said() || 'it said nothing'}`);
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
    stop,
  };
}
