import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawnLogged } from './children';
import { goBuiltWithWebAssets } from './go-tools';

export interface RunningMailCapture {
  smtpPort: number;
  uiPort: number;
  uiUrl: string;
  /** Mailpit's REST API (`/api/v1`): `/messages`, `/search`, `/message/{id}` with `/headers` and `/raw`. */
  apiUrl: string;
  /** Resolves, with how it ended, when Mailpit exits. */
  exited: Promise<string>;
  stop(): Promise<void>;
}

/** The Mailpit that docker-compose.yml names too. */
export const MAILPIT_VERSION = '1.33.1';

/**
 * Mailpit with its web UI, built once from its Go module (scripts/platform/go-tools.ts says how). The npm
 * registry here has rapidoc 9 at most, not the 12 Mailpit names: rapidoc draws only its API documentation page.
 */
export const mailpitBinary = (): Promise<string> =>
  goBuiltWithWebAssets({
    name: 'mailpit',
    module: 'github.com/axllent/mailpit',
    version: MAILPIT_VERSION,
    binary: 'mailpit',
    assetsScript: 'package',
    npmVersions: { rapidoc: '9.3.8' },
  });

/**
 * Starts Mailpit: a real SMTP server that captures mail, with its web UI and REST API. It keeps its mail in
 * `mailDirectory` (a restart on it finds the mail again); without one, in a folder of its own that `stop()`
 * removes. It takes any SMTP login, in clear too: the platform's channels log in as an organisation's relay
 * asks them to, and the capture stands in for that relay.
 */
export async function startMailCapture(args: {
  smtpPort: number;
  uiPort: number;
  logFile?: string;
  mailDirectory?: string;
  /** The newest this many are kept; every one when unset. */
  maxEmails?: number;
}): Promise<RunningMailCapture> {
  const binary = await mailpitBinary();
  const ownDirectory = args.mailDirectory ? null : fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-mail-'));
  const mailDirectory = args.mailDirectory ?? ownDirectory!;
  fs.mkdirSync(mailDirectory, { recursive: true });
  const mailpit = spawnLogged(
    binary,
    [
      '--smtp',
      `127.0.0.1:${args.smtpPort}`,
      '--listen',
      `127.0.0.1:${args.uiPort}`,
      '--database',
      path.join(mailDirectory, 'mailpit.db'),
      // 0 keeps every message.
      '--max',
      String(args.maxEmails ?? 0),
      '--smtp-auth-accept-any',
      '--smtp-auth-allow-insecure',
      // Loopback only: no look-up of the sender's name, and no call out for a newer version.
      '--smtp-disable-rdns',
      '--disable-version-check',
    ],
    args.logFile,
  );
  const removeOwnDirectory = () => ownDirectory && fs.rmSync(ownDirectory, { recursive: true, force: true });
  const stop = async () => {
    await mailpit.stop();
    removeOwnDirectory();
  };
  const uiUrl = `http://127.0.0.1:${args.uiPort}`;
  const apiUrl = `${uiUrl}/api/v1`;
  const started = Date.now();
  for (;;) {
    if (mailpit.exit() !== null) {
      removeOwnDirectory();
      throw new Error(`mail capture (Mailpit) exited while starting (${mailpit.exit()}): ${mailpit.said() || 'it said nothing'}`);
    }
    // Both ports must answer: Mailpit opens its web port first, and exits when its SMTP port is taken.
    const answer = await fetch(`${apiUrl}/messages?limit=1`).catch(() => null);
    if (answer?.ok && (await greetsAsMailpit(args.smtpPort))) break;
    if (Date.now() - started > 30000) {
      mailpit.child.kill('SIGKILL');
      removeOwnDirectory();
      throw new Error(`mail capture (Mailpit) did not answer on ${uiUrl} within 30 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { smtpPort: args.smtpPort, uiPort: args.uiPort, uiUrl, apiUrl, exited: mailpit.exited, stop };
}

/** Whether the SMTP port greets as Mailpit does: another process holding the port may accept, but says nothing so. */
function greetsAsMailpit(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let heard = '';
    const done = (greets: boolean) => {
      socket.destroy();
      resolve(greets);
    };
    socket.setTimeout(1000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('close', () => done(false));
    socket.on('data', (chunk) => {
      heard += chunk.toString('latin1');
      if (heard.includes('\n')) done(/^220 .*Mailpit/.test(heard));
    });
  });
}
