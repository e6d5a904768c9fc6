import fs from 'node:fs';
import os from 'node:os';
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

/**
 * Starts maildev: a real SMTP server that captures mail, with its web UI and REST API (`/api/email`). Its
 * mail is kept in `mailDirectory` (and loaded again by a restart on it, which takes longer the more there
 * is: `maxEmails` bounds it); without one, in a folder of its own that `stop()` removes. maildev writes
 * every message to a file even when it keeps them in memory, by default into one `maildev` folder in the
 * system's temporary folder that no run ever empties.
 */
export async function startMailCapture(args: {
  smtpPort: number;
  uiPort: number;
  logFile?: string;
  mailDirectory?: string;
  /** The newest this many are kept (and loaded again on a restart); every one when unset. */
  maxEmails?: number;
}): Promise<RunningMailCapture> {
  const ownDirectory = args.mailDirectory ? null : fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-mail-'));
  const mailDirectory = args.mailDirectory ?? ownDirectory!;
  fs.mkdirSync(mailDirectory, { recursive: true });
  const maildev = spawnLogged(
    MAILDEV,
    [
      '--smtp',
      String(args.smtpPort),
      '--web',
      String(args.uiPort),
      '--ip',
      '127.0.0.1',
      '--web-ip',
      '127.0.0.1',
      '--mail-directory',
      mailDirectory,
      ...(args.maxEmails ? ['--max-emails', String(args.maxEmails)] : []),
    ],
    args.logFile,
  );
  const removeOwnDirectory = () => ownDirectory && fs.rmSync(ownDirectory, { recursive: true, force: true });
  const stop = async () => {
    await maildev.stop();
    removeOwnDirectory();
  };
  const uiUrl = `http://127.0.0.1:${args.uiPort}`;
  const started = Date.now();
  for (;;) {
    if (maildev.exit() !== null) {
      removeOwnDirectory();
      throw new Error(`mail capture (maildev) exited while starting (${maildev.exit()}): ${maildev.said() || 'it said nothing'}`);
    }
    try {
      const answer = await fetch(`${uiUrl}/api/email`);
      if (answer.ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() - started > 30000) {
      maildev.child.kill('SIGKILL');
      removeOwnDirectory();
      throw new Error(`mail capture (maildev) did not answer on ${uiUrl} within 30 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    smtpPort: args.smtpPort,
    uiPort: args.uiPort,
    uiUrl,
    apiUrl: `${uiUrl}/api/email`,
    exited: maildev.exited,
    stop,
  };
}
