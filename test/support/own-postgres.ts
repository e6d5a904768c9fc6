import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { typescriptCommand } from '../../scripts/platform/children';
import { createDb } from '../../data/db';
import { migrateLatest } from '../../data/migrate';
import { freePort } from './slots';
import { waitUntil } from './wait';

const ROOT = path.resolve(__dirname, '..', '..');

export interface OwnPostgres {
  /** The migrated `opsflow` database. */
  url: string;
  /** Stops the server in fast mode (what an upgrade or a failover does) and answers once it is down. */
  stop(): Promise<void>;
  /** Starts it again on the same data and port. */
  start(): Promise<void>;
  /** Stops it for good and removes its data. */
  remove(): Promise<void>;
}

/**
 * A PostgreSQL server of the test's own, so that restarting it disturbs no other test file: embedded, on a
 * free port, migrated, in a process of its own.
 */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-own-pg-'));
  // As root the server runs as the `postgres` user, which must reach its data folder.
  fs.chmodSync(dir, 0o755);
  const port = await freePort();
  let url = '';
  let stopServer: (() => Promise<void>) | null = null;
  const start = async () => {
    const [command, argv] = typescriptCommand('test/support/postgres-process.ts', [path.join(dir, 'pg'), String(port)]);
    const child = spawn(command, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    url = await waitUntil('the own PostgreSQL to take connections', () => /^ready (\S+)$/m.exec(output)?.[1], {
      timeoutMs: 60000,
      intervalMs: 50,
      abortIf: () => (child.exitCode !== null ? `the own PostgreSQL exited:\n${output}` : null),
    });
    stopServer = async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    };
  };
  await start();
  const db = createDb({ databaseUrl: url, poolMax: 2 });
  await migrateLatest(db);
  await db.destroy();
  return {
    get url() {
      return url;
    },
    stop: async () => {
      await stopServer?.();
      stopServer = null;
    },
    start,
    remove: async () => {
      await stopServer?.();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
